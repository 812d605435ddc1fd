package dev.kvrouter.sim.policy;

/**
 * What a balancer knows of a request when it places it.
 *
 * @param chain        canonical chained block hashes of the prompt's full blocks, first to last
 *                     (what {@code KvRouterClient.pick(long[], String, String)} takes)
 * @param requestClass prefix class label (app, template) or null
 * @param clientId     client id or null
 */
public record PolicyRequest(String requestId, long[] chain, String requestClass, String clientId, int promptTokens) {}
