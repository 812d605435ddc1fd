package dev.kvrouter.sim.policy;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.events.RouteReason;
import dev.kvrouter.schemas.RouteReasons;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The project's own policy: the routing view in Redis, fed by the kv-router job from the
 * fleet's published events, asked through {@link KvRouterClient#pick(long[], String, String, String)}
 * by one or more independent balancers, each with its own connection, with the requests dealt
 * among them by request id. They share nothing but Redis: each pick reserves its engine there, and
 * a finished request releases its reservation ({@link KvRouterClient#done}). Needs the real
 * pipeline in the loop: publish this fleet to Kafka, run the job, and pace the clock to wall time.
 * A pick of a dead engine (the view learns of a death only after {@code engine.suspect-after}) is
 * asked again without it, up to {@link #MAX_RETRIES} times; an engine id the fleet does not know
 * (or none) falls back to least loaded. With holding on ({@code KvRouterClient.Options#hold}), a
 * pick may answer that every engine is full: the balancer holds the request ({@link Route#hold()}).
 */
public final class ViewPolicy implements Policy {

    /** One balancer's two calls; {@link KvRouterClient} in production, a fake in tests. */
    public interface Balancer extends AutoCloseable {
        /** @param avoid engines the balancer could not reach: left out of this pick */
        KvRouterClient.Pick pick(long[] chain, String prefixClass, String clientId, String requestId, Set<String> avoid);

        void done(String requestId);

        /** The requests it still holds keep their places ({@link KvRouterClient#holding}). */
        default void holding(List<String> requestIds) {}

        @Override
        default void close() {}
    }

    /** Picks each balancer makes before the run (reserving nothing): enough for the JIT to compile the pick path. */
    static final int WARM_UP_PICKS = 2_000;
    /** Engines a request tries besides its first pick before it falls back to load only. */
    static final int MAX_RETRIES = 2;

    private final List<Balancer> balancers;
    /** Compares each prompt's match with a read of every block ({@code --audit-match}); null: no audit. */
    private final MatchAudit audit;

    public ViewPolicy(List<Balancer> balancers) {
        this(balancers, null);
    }

    private ViewPolicy(List<Balancer> balancers, MatchAudit audit) {
        if (balancers.isEmpty()) {
            throw new IllegalArgumentException("the view policy needs at least one balancer");
        }
        this.balancers = List.copyOf(balancers);
        this.audit = audit;
    }

    /**
     * {@code count} balancers on a live view, each a {@link KvRouterClient} with these options, closed
     * with the policy; with {@code auditReport} set (else null), every prompt's match is also audited
     * against a read of all its blocks ({@link MatchAudit}), the figures printed there at close.
     */
    public static ViewPolicy connect(KvRouterClient.Options options, int count, java.io.PrintStream auditReport) {
        List<Balancer> clients = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            KvRouterClient client = new KvRouterClient(options);
            // Ready before the first request, as a balancer behind a readiness probe: a cold client's
            // first picks are slow, and the paced clock then delivers the requests due meanwhile in a rush.
            client.warmUp(WARM_UP_PICKS);
            clients.add(new Balancer() {
                @Override
                public KvRouterClient.Pick pick(long[] chain, String prefixClass, String clientId, String requestId, Set<String> avoid) {
                    return client.pick(chain, prefixClass, clientId, requestId, avoid);
                }

                @Override
                public void done(String requestId) {
                    client.done(requestId);
                }

                @Override
                public void holding(List<String> requestIds) {
                    client.holding(requestIds);
                }

                @Override
                public void close() {
                    client.close();
                }
            });
        }
        return new ViewPolicy(clients, auditReport == null ? null : new MatchAudit(options, auditReport));
    }

    @Override
    public String name() {
        return "view";
    }

    /** The balancer a request is dealt to: by its id, so the one that placed it also reports it done. */
    @Override
    public int balancerOf(String requestId) {
        return Math.floorMod(requestId.hashCode(), balancers.size());
    }

    @Override
    public Route route(PolicyRequest request, FleetView fleet) {
        Balancer balancer = balancers.get(balancerOf(request.requestId()));
        KvRouterClient.Pick pick = balancer.pick(request.chain(), request.requestClass(), request.clientId(), request.requestId(), Set.of());
        if (audit != null) {
            audit.check(request.chain());
        }
        if (pick.held()) {
            return Route.hold(); // every engine full: the balancer keeps the request and asks again
        }
        int engine = indexOf(pick, fleet);
        // A dead engine the view does not know of yet refuses the connection: the balancer asks again
        // without it (its reservation moves), as a real one retries a refused request.
        Set<String> unreachable = new HashSet<>();
        for (int retry = 0; engine >= 0 && !fleet.alive(engine) && retry < MAX_RETRIES; retry++) {
            unreachable.add(pick.engineId());
            pick = balancer.pick(request.chain(), request.requestClass(), request.clientId(), request.requestId(), Set.copyOf(unreachable));
            if (pick.held()) {
                return Route.hold();
            }
            engine = indexOf(pick, fleet);
        }
        if (engine < 0 || !fleet.alive(engine)) {
            return new Route(Loads.leastLoaded(fleet), 0, RouteReason.FALLBACK_LOAD_ONLY, pick.bestHolderBlocks());
        }
        return new Route(engine, Math.max(0, pick.matchedBlocks()), reason(pick.reason()), pick.bestHolderBlocks(),
                pick.saving().prefillMs(), pick.saving().addedWaitMs(), RouteReasons.detail(pick.reason()));
    }

    private static int indexOf(KvRouterClient.Pick pick, FleetView fleet) {
        return pick.engineId() == null || pick.engineId().isEmpty() ? -1 : fleet.indexOf(pick.engineId());
    }

    @Override
    public void finished(PolicyRequest request, int engine) {
        balancers.get(balancerOf(request.requestId())).done(request.requestId());
    }

    @Override
    public void holding(List<String> requestIds) {
        java.util.Map<Integer, List<String>> byBalancer = new java.util.TreeMap<>();
        for (String id : requestIds) {
            byBalancer.computeIfAbsent(balancerOf(id), b -> new ArrayList<>()).add(id);
        }
        byBalancer.forEach((b, ids) -> balancers.get(b).holding(ids));
    }

    static RouteReason reason(String reason) {
        if (reason == null) {
            return RouteReason.UNKNOWN;
        }
        RouteReason family = RouteReasons.of(reason);
        if (family == RouteReason.NO_VIEW || family == RouteReason.UNKNOWN) {
            return RouteReason.FALLBACK_LOAD_ONLY; // the client placed it on load alone; or a reason newer than this contract
        }
        return family;
    }

    @Override
    public void close() {
        RuntimeException failed = null;
        for (Balancer b : balancers) {
            try {
                b.close();
            } catch (Exception e) {
                failed = failed != null ? failed : new IllegalStateException("closing a view client failed", e);
            }
        }
        if (audit != null) {
            audit.close();
        }
        if (failed != null) {
            throw failed;
        }
    }
}
