package dev.kvrouter.sim.workload;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The synthetic workloads, seeded and deterministic; each request carries its class label and client:
 * <ul>
 * <li>{@code system-prompt}: apps with standing system prompts, app popularity Zipf, each request the
 *     app's prompt plus a unique user suffix (client: the user);</li>
 * <li>{@code chat}: multi-turn sessions, each turn the previous prompt + the reply + a new user
 *     message (client: the session);</li>
 * <li>{@code one-shot}: unique batch prompts, nothing shared (client: one of a few batch jobs);</li>
 * <li>{@code burst}: one client sends many requests on one prompt within seconds;</li>
 * <li>{@code long-context}: thousands of multi-turn sessions on long documents (8k–32k-token prompts),
 *     each opening on a context of its own, so almost every first block is distinct and the only
 *     reuse is a session's next turn (client: the session);</li>
 * <li>{@code long-prefix}: conversations that each read one of 400 shared long documents (or tool
 *     schemas) of 10k–40k tokens, chosen by Zipf popularity: a head read over and over, a long tail
 *     read once or twice, caches a few dozen documents deep, each hit worth seconds of prefill
 *     (client: the conversation).</li>
 * </ul>
 * {@code mixed} runs the first four together.
 */
public final class SyntheticWorkload implements Workload {

    public static final List<String> KINDS = List.of("mixed", "system-prompt", "chat", "one-shot", "burst", "long-context", "long-prefix");

    /** Rates and shapes; the defaults suit 8 engines of {@code EngineConfig.defaults()} at moderate load. */
    public record Settings(double durationS, long seed,
                           double systemPromptRps, int apps, double zipfExponent, int systemPromptTokensMin, int systemPromptTokensMax,
                           int userSuffixTokensMin, int userSuffixTokensMax, int users,
                           double chatSessionsPerS, int turnsMin, int turnsMax, double thinkTimeMeanS, int chatTurnTokensMin, int chatTurnTokensMax,
                           double oneShotRps, int oneShotTokensMin, int oneShotTokensMax,
                           double burstAtFraction, int burstRequests, double burstSpanS, int burstPromptTokens,
                           int outputTokensMin, int outputTokensMax,
                           double longContextSessionsPerS, int longContextTokensMin, int longContextTokensMax, int longContextMaxTokens,
                           double longPrefixSessionsPerS, int documents, double documentZipfExponent, int documentTokensMin,
                           int documentTokensMax) {

        public static Settings defaults(double durationS, long seed) {
            return new Settings(durationS, seed,
                    6, 8, 1.1, 1_000, 3_000, 50, 400, 2_000,
                    0.4, 2, 10, 20, 100, 600,
                    1.5, 500, 4_000,
                    0.5, 300, 10, 2_500,
                    50, 400,
                    2.5, 8_000, 16_000, 32_000,
                    0.8, 400, 1.0, 10_000, 40_000);
        }

        /** These settings with every arrival rate (and the burst's size) multiplied by {@code scale}. */
        public Settings scaled(double scale) {
            return new Settings(durationS, seed, systemPromptRps * scale, apps, zipfExponent, systemPromptTokensMin,
                    systemPromptTokensMax, userSuffixTokensMin, userSuffixTokensMax, users, chatSessionsPerS * scale, turnsMin, turnsMax,
                    thinkTimeMeanS, chatTurnTokensMin, chatTurnTokensMax, oneShotRps * scale, oneShotTokensMin, oneShotTokensMax,
                    burstAtFraction, (int) Math.round(burstRequests * scale), burstSpanS, burstPromptTokens, outputTokensMin,
                    outputTokensMax, longContextSessionsPerS * scale, longContextTokensMin, longContextTokensMax, longContextMaxTokens,
                    longPrefixSessionsPerS * scale, documents, documentZipfExponent, documentTokensMin, documentTokensMax);
        }
    }

    private final String kind;
    private final Settings s;

    public SyntheticWorkload(String kind, Settings settings) {
        if (!KINDS.contains(kind)) {
            throw new IllegalArgumentException("unknown workload '" + kind + "'; one of " + KINDS);
        }
        this.kind = kind;
        this.s = settings;
    }

    @Override
    public String name() {
        return String.format(Locale.ROOT, "%s (%.0f s, seed %d)", kind, s.durationS(), s.seed());
    }

    @Override
    public Iterator<SimRequest> requests() {
        return generate().iterator();
    }

    /** All requests, sorted by arrival (ties keep generation order), numbered from 0. */
    public List<SimRequest> generate() {
        List<SimRequest> all = new ArrayList<>();
        boolean mixed = kind.equals("mixed");
        if (mixed || kind.equals("system-prompt")) {
            systemPrompts(all);
        }
        if (mixed || kind.equals("chat")) {
            chats(all);
        }
        if (mixed || kind.equals("one-shot")) {
            oneShots(all);
        }
        if (mixed || kind.equals("burst")) {
            burst(all);
        }
        if (kind.equals("long-context")) {
            longContext(all);
        }
        if (kind.equals("long-prefix")) {
            longPrefix(all);
        }
        all.sort(Comparator.comparingDouble(SimRequest::arrivalMs));
        List<SimRequest> numbered = new ArrayList<>(all.size());
        for (int i = 0; i < all.size(); i++) {
            SimRequest r = all.get(i);
            numbered.add(new SimRequest(i, r.arrivalMs(), r.requestClass(), r.clientId(), r.prompt(), r.outputTokens()));
        }
        return numbered;
    }

    private double endMs() {
        return s.durationS() * 1000;
    }

    private void systemPrompts(List<SimRequest> out) {
        SplittableRandom rnd = new SplittableRandom(s.seed() * 31 + 1);
        double[] cdf = zipfCdf(s.apps(), s.zipfExponent());
        Prompt.Segment[] system = new Prompt.Segment[s.apps()];
        for (int a = 0; a < s.apps(); a++) {
            system[a] = new Prompt.Segment(seed(1, a), between(rnd, s.systemPromptTokensMin(), s.systemPromptTokensMax()));
        }
        double t = 0;
        for (long n = 0; ; n++) {
            t += exponential(rnd, 1000 / s.systemPromptRps());
            if (t >= endMs()) {
                return;
            }
            int app = sample(cdf, rnd.nextDouble());
            Prompt p = Prompt.of(system[app], new Prompt.Segment(seed(2, n), between(rnd, s.userSuffixTokensMin(), s.userSuffixTokensMax())));
            out.add(new SimRequest(0, t, "system-prompt", "user-" + rnd.nextInt(s.users()), p, output(rnd)));
        }
    }

    private void chats(List<SimRequest> out) {
        sessions(out, new SplittableRandom(s.seed() * 31 + 2), s.chatSessionsPerS(), new int[] {3, 4, 5}, s.chatTurnTokensMin(),
                s.chatTurnTokensMax(), s.chatTurnTokensMax(), Integer.MAX_VALUE, "chat", "session-");
    }

    /**
     * Multi-turn sessions: each opens on a segment of its own ({@code firstMin}–{@code firstMax} tokens), and
     * each next turn is the previous prompt + the reply + a new message (up to {@code messageMax} tokens), until
     * the session's turns are done or its prompt is over {@code maxTokens}. {@code generators}: the segment
     * seeds' generators for the first segment, the replies and the messages.
     */
    private void sessions(List<SimRequest> out, SplittableRandom rnd, double sessionsPerS, int[] generators, int firstMin,
                          int firstMax, int messageMax, int maxTokens, String requestClass, String clientPrefix) {
        double start = 0;
        for (long session = 0; ; session++) {
            start += exponential(rnd, 1000 / sessionsPerS);
            if (start >= endMs()) {
                return;
            }
            int turns = between(rnd, s.turnsMin(), s.turnsMax());
            Prompt prompt = Prompt.of(new Prompt.Segment(seed(generators[0], session * 1000), between(rnd, firstMin, firstMax)));
            double t = start;
            for (int turn = 0; turn < turns && t < endMs() && prompt.length() <= maxTokens; turn++) {
                int output = output(rnd);
                out.add(new SimRequest(0, t, requestClass, clientPrefix + session, prompt, output));
                // The next turn carries this turn's reply and a new user message.
                prompt = prompt.extend(new Prompt.Segment(seed(generators[1], session * 1000 + turn), output),
                        new Prompt.Segment(seed(generators[2], session * 1000 + turn), between(rnd, s.chatTurnTokensMin(), messageMax)));
                t += exponential(rnd, s.thinkTimeMeanS() * 1000) + output * 1000.0 / 30;
            }
        }
    }

    private void oneShots(List<SimRequest> out) {
        SplittableRandom rnd = new SplittableRandom(s.seed() * 31 + 3);
        double t = 0;
        for (long n = 0; ; n++) {
            t += exponential(rnd, 1000 / s.oneShotRps());
            if (t >= endMs()) {
                return;
            }
            Prompt p = Prompt.of(new Prompt.Segment(seed(6, n), between(rnd, s.oneShotTokensMin(), s.oneShotTokensMax())));
            out.add(new SimRequest(0, t, "one-shot", "batch-" + (n % 4), p, output(rnd)));
        }
    }

    /** Sessions on a document of their own each (the first segment), so almost every first block is distinct. */
    private void longContext(List<SimRequest> out) {
        sessions(out, new SplittableRandom(s.seed() * 31 + 5), s.longContextSessionsPerS(), new int[] {9, 10, 11},
                s.longContextTokensMin(), s.longContextTokensMax(), s.chatTurnTokensMax() * 3, s.longContextMaxTokens(), "long-context",
                "lc-session-");
    }

    /**
     * Conversations on shared documents: each opens on one of {@code documents} long documents (Zipf popularity)
     * followed by a question of its own, and each next turn adds the reply and a new question, as chat does.
     */
    private void longPrefix(List<SimRequest> out) {
        SplittableRandom rnd = new SplittableRandom(s.seed() * 31 + 6);
        double[] cdf = zipfCdf(s.documents(), s.documentZipfExponent());
        Prompt.Segment[] documents = new Prompt.Segment[s.documents()];
        for (int d = 0; d < documents.length; d++) {
            documents[d] = new Prompt.Segment(seed(12, d), between(rnd, s.documentTokensMin(), s.documentTokensMax()));
        }
        double start = 0;
        for (long session = 0; ; session++) {
            start += exponential(rnd, 1000 / s.longPrefixSessionsPerS());
            if (start >= endMs()) {
                return;
            }
            int turns = between(rnd, 1, s.turnsMax() / 2);
            Prompt prompt = Prompt.of(documents[sample(cdf, rnd.nextDouble())],
                    new Prompt.Segment(seed(13, session * 1000), between(rnd, s.chatTurnTokensMin(), s.chatTurnTokensMax())));
            double t = start;
            for (int turn = 0; turn < turns && t < endMs(); turn++) {
                int output = output(rnd);
                out.add(new SimRequest(0, t, "long-prefix", "lp-session-" + session, prompt, output));
                prompt = prompt.extend(new Prompt.Segment(seed(14, session * 1000 + turn), output),
                        new Prompt.Segment(seed(13, session * 1000 + turn + 1), between(rnd, s.chatTurnTokensMin(), s.chatTurnTokensMax())));
                t += exponential(rnd, s.thinkTimeMeanS() * 1000) + output * 1000.0 / 30;
            }
        }
    }

    private void burst(List<SimRequest> out) {
        SplittableRandom rnd = new SplittableRandom(s.seed() * 31 + 4);
        Prompt.Segment shared = new Prompt.Segment(seed(7, 0), s.burstPromptTokens());
        double at = endMs() * s.burstAtFraction();
        for (int n = 0; n < s.burstRequests(); n++) {
            double t = at + rnd.nextDouble() * s.burstSpanS() * 1000;
            out.add(new SimRequest(0, t, "burst", "burst-client", Prompt.of(shared, new Prompt.Segment(seed(8, n), 32)), output(rnd)));
        }
    }

    private int output(SplittableRandom rnd) {
        return between(rnd, s.outputTokensMin(), s.outputTokensMax());
    }

    /** A segment seed unique to (generator, n) and to this workload's seed. */
    private long seed(int generator, long n) {
        return s.seed() * 0x100000001B3L + generator * 0x1000000000L + n;
    }

    static int between(SplittableRandom rnd, int min, int max) {
        return max <= min ? min : min + rnd.nextInt(max - min + 1);
    }

    static double exponential(SplittableRandom rnd, double meanMs) {
        return -Math.log(1 - rnd.nextDouble()) * meanMs;
    }

    /** Cumulative Zipf probabilities of ranks 1..n: P(k) ∝ 1 / k^s. */
    static double[] zipfCdf(int n, double exponent) {
        double[] cdf = new double[n];
        double sum = 0;
        for (int k = 0; k < n; k++) {
            sum += 1 / Math.pow(k + 1, exponent);
            cdf[k] = sum;
        }
        for (int k = 0; k < n; k++) {
            cdf[k] /= sum;
        }
        return cdf;
    }

    static int sample(double[] cdf, double u) {
        for (int k = 0; k < cdf.length; k++) {
            if (u < cdf[k]) {
                return k;
            }
        }
        return cdf.length - 1;
    }
}
