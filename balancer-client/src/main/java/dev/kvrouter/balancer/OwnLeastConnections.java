package dev.kvrouter.balancer;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The last resort when the view names no engine at all (its engine table empty, or Redis gone before
 * the client ever read it): this client's own requests in flight per configured engine, as nginx's
 * {@code least_conn} counts them. Only this client's requests are counted; other balancers' are not
 * seen. Bounded: past {@code cap} requests never reported done, the oldest are forgotten.
 */
final class OwnLeastConnections {

    private final Map<String, Integer> inFlight = new HashMap<>();
    private final LinkedHashMap<String, String> engineOfRequest;
    /** Where the next tie-break starts, so that engines tied at zero take turns rather than all go to the first. */
    private int turn;

    OwnLeastConnections(int cap) {
        this.engineOfRequest = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
                if (size() <= cap) {
                    return false;
                }
                release(eldest.getValue()); // a request never reported done stops counting once it is the oldest past the cap
                return true;
            }
        };
    }

    /** The engine of {@code engines}, not in {@code avoid}, with the fewest of this client's requests; empty when none is left. */
    synchronized Optional<String> choose(List<String> engines, Set<String> avoid) {
        String best = null;
        int fewest = Integer.MAX_VALUE;
        int n = engines.size();
        for (int i = 0; i < n; i++) {
            String e = engines.get((turn + i) % n);
            int count = inFlight.getOrDefault(e, 0);
            if (!avoid.contains(e) && count < fewest) {
                best = e;
                fewest = count;
            }
        }
        turn = n == 0 ? 0 : (turn + 1) % n;
        return Optional.ofNullable(best);
    }

    /** The request went to {@code engine}; under an id already counted it moves there (a retry elsewhere). */
    synchronized void started(String requestId, String engine) {
        String before = engineOfRequest.remove(requestId);
        if (before != null) {
            release(before);
        }
        inFlight.merge(engine, 1, Integer::sum);
        engineOfRequest.put(requestId, engine);
    }

    /** The request ended; an id not counted (never placed here, forgotten, or already ended) changes nothing. */
    synchronized void ended(String requestId) {
        String engine = engineOfRequest.remove(requestId);
        if (engine != null) {
            release(engine);
        }
    }

    synchronized int inFlight(String engine) {
        return inFlight.getOrDefault(engine, 0);
    }

    private void release(String engine) {
        inFlight.computeIfPresent(engine, (e, c) -> c > 1 ? c - 1 : null); // an engine at zero leaves the map
    }
}
