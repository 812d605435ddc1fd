package dev.kvrouter.sim.workload;

/**
 * One request of a workload: when it arrives, its class label and client, its prompt and how many
 * tokens it will generate.
 *
 * @param requestClass the prefix class label a balancer would supply (app, chat, one-shot, burst)
 */
public record SimRequest(long seq, double arrivalMs, String requestClass, String clientId, Prompt prompt, int outputTokens) {

    public int promptTokens() {
        return prompt.length();
    }
}
