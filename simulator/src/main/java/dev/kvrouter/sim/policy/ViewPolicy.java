package dev.kvrouter.sim.policy;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.events.RouteReason;

/**
 * The project's own policy: the routing view in Redis, fed by the routing-view job from the
 * fleet's published events, asked through {@link KvRouterClient#pick(long[], String, String)}.
 * Needs the real pipeline in the loop: publish this fleet to Kafka, run the job, and pace the
 * clock to wall time. An engine id the fleet does not know (or none) falls back to least loaded.
 */
public final class ViewPolicy implements Policy {

    /** The one call the policy makes; {@code KvRouterClient::pick} in production, a fake in tests. */
    @FunctionalInterface
    public interface Picker {
        KvRouterClient.Pick pick(long[] chain, String prefixClass, String clientId);
    }

    private final Picker picker;
    private final AutoCloseable resource;

    public ViewPolicy(Picker picker, AutoCloseable resource) {
        this.picker = picker;
        this.resource = resource;
    }

    /** A policy on a live view: a {@link KvRouterClient} with these options, closed with the policy. */
    public static ViewPolicy connect(KvRouterClient.Options options) {
        KvRouterClient client = new KvRouterClient(options);
        return new ViewPolicy(client::pick, client);
    }

    @Override
    public String name() {
        return "view";
    }

    @Override
    public Route route(PolicyRequest request, FleetView fleet) {
        KvRouterClient.Pick pick = picker.pick(request.chain(), request.requestClass(), request.clientId());
        int engine = pick.engineId() == null || pick.engineId().isEmpty() ? -1 : fleet.indexOf(pick.engineId());
        if (engine < 0 || !fleet.alive(engine)) {
            return new Route(Loads.leastLoaded(fleet), 0, RouteReason.FALLBACK_LOAD_ONLY);
        }
        return new Route(engine, Math.max(0, pick.matchedBlocks()), reason(pick.reason()));
    }

    static RouteReason reason(String reason) {
        if (reason == null) {
            return RouteReason.UNKNOWN;
        }
        try {
            return RouteReason.valueOf(reason);
        } catch (IllegalArgumentException e) {
            return RouteReason.FALLBACK_LOAD_ONLY; // NO_VIEW and anything newer than this enum
        }
    }

    @Override
    public void close() {
        try {
            resource.close();
        } catch (Exception e) {
            throw new IllegalStateException("closing the view client failed", e);
        }
    }
}
