package dev.kvrouter.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.ViewLayout;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every function of the library called 10 000 times with arguments a buggy or hostile balancer could
 * send — NaN, infinities, negative, fractional, huge and empty numbers, hashes that are not hex, runs
 * and hold times out of range, too many or too few arguments — on a Redis of its own (a call that
 * hangs must hang nobody else's). Whatever comes: Redis answers every call at once and never BUSY, a
 * call refused writes nothing, a call with a value that cannot be right is refused, and afterwards,
 * every request done, the view places a sane request where it always did.
 */
class FunctionArgumentsITCase {

    private static final int CALLS = 10_000;
    /** Values no numeric argument may take. */
    private static final List<String> NOT_NUMBERS = List.of("inf", "-inf", "nan", "-nan", "NaN", "Infinity", "1e999", "x", "", " 7",
            "0x10", "7 ");
    private static final List<String> OUT_OF_RANGE = List.of("-1", "-0.5", "2.5", "1e308", "18446744073709551616", "4294967296");

    @TempDir
    Path dir;

    private PrivateViewRedis view;
    private RedisCommands<String, String> redis;
    private final ViewLayout layout = new ViewLayout("fuzz:");
    private long[] chain;
    private String packed;

    @BeforeEach
    void setUp() {
        view = new PrivateViewRedis(dir.resolve("redis"));
        redis = view.redis;
        redis.configSet("slowlog-log-slower-than", "50000"); // 50 ms
        redis.slowlogReset();
        long now = System.currentTimeMillis();
        redis.hset(layout.metaKey(), Map.of("updated_ms", Long.toString(now + 3_600_000), "busy_factor", "2.0", "confidence_floor", "0.05",
                "prefill_tokens_per_s", "16", "uncached_prefill_weight", "3", "client_cap", "0.5", "client_min_inflight", "4"));
        for (String e : List.of("e1", "e2", "e3")) {
            redis.hset(layout.enginesKey(), e, new EngineEntry("READY", 0, 0, 500, 600_000, 1, false, now, EngineEntry.BOTH, 8, 0, 20_000)
                    .encode());
        }
        chain = new CanonicalBlockHasher(16).chain("m", null, IntStream.range(0, 16 * 8).toArray(), List.of());
        StringBuilder p = new StringBuilder();
        for (int position = 1; position <= chain.length; position++) {
            redis.hset(layout.groupKey(ViewLayout.tag(chain, position, 2)), ViewLayout.hex(chain[position - 1]), ViewLayout.holder("e1", now, 1));
            p.append(ViewLayout.hex(chain[position - 1]));
        }
        packed = p.toString();
    }

    @AfterEach
    void tearDown() {
        if (view != null) {
            view.close();
        }
    }

    /** One call: the function, its keys and arguments, and whether a value in it cannot be right. */
    private record Call(String function, String[] keys, String[] args, boolean mustBeRefused) {
        @Override
        public String toString() {
            return function + " " + Arrays.toString(keys) + " " + Arrays.toString(args) + (mustBeRefused ? " (must be refused)" : "");
        }
    }

    @Test
    void nothingABalancerSendsHangsRedisWritesHalfACallOrPoisonsTheView() {
        Random random = new Random(35);
        Set<String> requests = new LinkedHashSet<>();
        for (int i = 0; i < CALLS; i++) {
            Call call = call(random, "r" + random.nextInt(200));
            requests.add("r" + i % 200);
            String before = digest();
            Object answer;
            try {
                answer = invoke(call);
            } catch (RedisCommandExecutionException refused) {
                assertThat(refused.getMessage()).as("%s", call).doesNotContain("BUSY").doesNotContain("UNKILLABLE");
                assertThat(digest()).as("a refused call writes nothing: %s (%s)", call, refused.getMessage()).isEqualTo(before);
                assertThat(call.mustBeRefused()).as("refused a call that is right: %s (%s)", call, refused.getMessage()).isTrue();
                continue;
            }
            assertThat(call.mustBeRefused()).as("answered %s to %s", answer, call).isFalse();
        }
        // The library's calls only: the test's own digest (a KEYS and a read of every key, as EVAL) is no call a balancer makes.
        assertThat(redis.slowlogGet()).as("no call of the library over 50 ms").filteredOn(entry -> {
            Object command = ((List<?>) entry).get(3);
            return command instanceof List<?> words && !words.isEmpty() && String.valueOf(words.get(0)).startsWith("FCALL");
        }).isEmpty();

        // Every request done: nothing is left reserved or queued, and what is queued is a real time.
        redis.fcall(ViewLayout.DONE_FUNCTION, ScriptOutputType.INTEGER, layout.functionKeys(),
                requests.toArray(String[]::new));
        assertThat(redis.hlen(layout.reservationsKey())).isZero();
        Map<String, String> queued = redis.hgetall(layout.reservationsKey() + ":prefill");
        assertThat(queued.values()).allSatisfy(v -> {
            assertThat(v).startsWith("t");
            double tokens = Double.parseDouble(v.substring(1, v.indexOf('|')));
            assertThat(tokens).as("queued prefill %s", v).isFinite().isBetween(0.0, CALLS * 8 * 16.0);
        });
        // A sane placement of the held prompt goes to its holder in the view, once what the fuzz's own placements
        // left behind them (queued prefill, the pending prefixes that made other engines holders too) is gone.
        redis.del(redis.keys(layout.reservationsKey() + "*").toArray(String[]::new));
        List<Object> answer = invoke(new Call(ViewLayout.PICK_FUNCTION, layout.functionKeys(), new String[] {"2000", "", "", "sane", "8", packed}, false));
        assertThat(answer.subList(0, 3)).containsExactly("e1", 8L, "AFFINITY");
    }

    @SuppressWarnings("unchecked")
    private List<Object> invoke(Call call) {
        if (call.function().equals(ViewLayout.PEEK_FUNCTION)) {
            return redis.fcallReadOnly(call.function(), ScriptOutputType.MULTI, call.keys(), call.args());
        }
        if (call.function().equals(ViewLayout.DONE_FUNCTION) || call.function().equals(ViewLayout.HOLDING_FUNCTION)) {
            return List.of(redis.<Long>fcall(call.function(), ScriptOutputType.INTEGER, call.keys(), call.args()));
        }
        return redis.fcall(call.function(), ScriptOutputType.MULTI, call.keys(), call.args());
    }

    /** The keys a layout-8 caller gave kvr_pick: the view's keys too (layout 9 takes the reservations key alone). */
    private String[] layout8PickKeys() {
        return new String[] {layout.metaKey(), layout.enginesKey(), layout.groupKey(chain[0]), layout.groupKey(ViewLayout.tag(chain, 2, 2)),
                layout.classesKey(), layout.reservationsKey()};
    }

    /** A call of one of the functions: valid, or with one or two of its arguments spoiled. */
    private Call call(Random random, String request) {
        int kind = random.nextInt(5);
        String[] keys;
        List<String> args;
        List<Integer> numeric; // argument positions that must be numbers in range
        switch (kind) {
            case 0, 1 -> { // kvr_pick, kvr_peek
                keys = layout.functionKeys();
                args = new ArrayList<>(List.of("2000", "chat", "c" + random.nextInt(3), request, "8", packed, "", "500"));
                numeric = List.of(0, 4, 7);
            }
            case 2 -> { // kvr_place: the runs the balancer matched, then the hashes at positions 1, 2, 4, 8
                keys = layout.functionKeys();
                args = new ArrayList<>(List.of("2000", "chat", "c" + random.nextInt(3), request, "8", "e1=8:0.9512294245007139",
                        ViewLayout.hex(chain[0]), ViewLayout.hex(chain[1]), ViewLayout.hex(chain[3]), ViewLayout.hex(chain[7]), "", "500"));
                numeric = List.of(0, 4, 11);
            }
            case 3 -> { // kvr_done
                keys = layout.functionKeys();
                args = new ArrayList<>(List.of(request));
                numeric = List.of();
            }
            default -> { // kvr_holding
                keys = layout.functionKeys();
                args = new ArrayList<>(List.of(request));
                numeric = List.of();
            }
        }
        String function = switch (kind) {
            case 0 -> ViewLayout.PICK_FUNCTION;
            case 1 -> ViewLayout.PEEK_FUNCTION;
            case 2 -> ViewLayout.PLACE_FUNCTION;
            case 3 -> ViewLayout.DONE_FUNCTION;
            default -> ViewLayout.HOLDING_FUNCTION;
        };
        int spoil = random.nextInt(10); // 3 in 10 calls are left as they are
        boolean keysSpoiled = false;
        for (int s = 0; s < (spoil >= 8 ? 2 : spoil >= 3 ? 1 : 0); s++) {
            int how = random.nextInt(9);
            if (how == 8) {
                // The keys of an older layout, a view key in the reservations key's place, or none.
                String[][] wrong = {layout8PickKeys(), {layout.metaKey()}, {}, {layout.reservationsKey() + "x"}};
                keys = wrong[random.nextInt(wrong.length)];
                keysSpoiled = true;
                continue;
            }
            if (how <= 2 && !numeric.isEmpty()) {
                // A number that is not one, or out of every range the position allows.
                int at = numeric.get(random.nextInt(numeric.size()));
                List<String> bad = how == 0 ? NOT_NUMBERS : OUT_OF_RANGE;
                if (at < args.size()) {
                    args.set(at, bad.get(random.nextInt(bad.size())));
                }
            } else if (how == 3 && kind <= 2) {
                // The prompt's hashes spoiled: not hex, or not 16 digits each.
                int at = kind <= 1 ? 5 : 6 + random.nextInt(4);
                if (at < args.size()) {
                    String hashes = args.get(at);
                    args.set(at, random.nextBoolean() ? hashes.substring(0, hashes.length() - 1) : "zz" + hashes.substring(2));
                }
            } else if (how == 4 && kind == 2 && args.size() > 5) {
                // Runs no balancer could have matched: deeper than the prompt, confidence not in [0, 1], unparsable.
                String[] runs = {"e1=99999:1.0", "e1=8:nan", "e1=8:-1", "e1=8:7", "e1=-3:1.0", "e1=8", "=8:1.0", "e1=2.5:1.0", "e1=8:inf",
                        "e1=8:1.0E-4"};
                args.set(5, runs[random.nextInt(runs.length)]);
            } else if (how == 5) {
                args.add("junk"); // one argument more
            } else if (how == 6 && !args.isEmpty()) {
                args = new ArrayList<>(args.subList(0, random.nextInt(args.size()))); // cut short
            } else if (how == 7 && !args.isEmpty()) {
                // An id or a label a buggy balancer might send: huge.
                int at = kind <= 2 ? 1 + random.nextInt(Math.min(3, Math.max(1, args.size() - 1))) : 0;
                if (at < args.size()) {
                    args.set(at, "x".repeat(70_000));
                }
            }
        }
        return new Call(function, keys, args.toArray(String[]::new), keysSpoiled || !valid(kind, args));
    }

    /**
     * The functions' arguments, stated once more in Java: whether a call's arguments can be right. Numbers
     * are decimal integers in range (max view age up to 10^12 ms, n up to 65 536 blocks, hold up to
     * 600 000 ms or '' for never); the prompt's hashes 16 lowercase hex digits each; ids and labels up to
     * 1 024 characters; kvr_place's runs {@code engine=depth:confidence}, depth at most n, confidence in
     * [0, 1]; its sampled hashes all or none; and no argument more than a function takes.
     */
    static boolean valid(int kind, List<String> a) {
        if (kind >= 3) {
            return a.stream().allMatch(id -> id.length() <= 1_024);
        }
        if (a.size() < 6 || !integer(a.get(0), 1_000_000_000_000L) || !integer(a.get(4), 65_536)
                || a.subList(1, 4).stream().anyMatch(x -> x.length() > 1_024)) {
            return false;
        }
        int n = Integer.parseInt(a.get(4));
        int tail;
        if (kind <= 1) {
            if (!a.get(5).matches("[0-9a-f]*") || a.get(5).length() != 16 * n) {
                return false;
            }
            tail = 6;
        } else {
            if (!runs(a.get(5), n)) {
                return false;
            }
            int at = ViewLayout.pendingPositions(n).length;
            if (a.size() == 6) {
                return true;
            }
            if (a.size() < 6 + at || a.subList(6, 6 + at).stream().anyMatch(h -> !h.matches("[0-9a-f]{16}"))) {
                return false;
            }
            tail = 6 + at;
        }
        if (a.size() > tail + 2) {
            return false;
        }
        if (a.size() > tail && a.get(tail).length() > 65_536) {
            return false;
        }
        return a.size() <= tail + 1 || a.get(tail + 1).isEmpty() || integer(a.get(tail + 1), 600_000);
    }

    private static boolean integer(String s, long max) {
        return s.matches("\\d{1,15}") && Long.parseLong(s) <= max;
    }

    private static boolean runs(String runs, int n) {
        if (runs.isEmpty()) {
            return true;
        }
        for (String run : runs.split(",", -1)) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("([^,=:]+)=(\\d{1,15}):(.+)").matcher(run);
            if (!m.matches() || Long.parseLong(m.group(2)) > n) {
                return false;
            }
            try {
                double confidence = Double.parseDouble(m.group(3));
                if (!(confidence >= 0 && confidence <= 1) || !m.group(3).matches("[0-9.eE+-]+")) {
                    return false;
                }
            } catch (NumberFormatException e) {
                return false;
            }
        }
        return true;
    }

    /** A digest of every key of the view, its value and its expiry: what a refused call must leave as it was. */
    private String digest() {
        return redis.eval("""
                local out = {}
                local keys = redis.call('KEYS', ARGV[1] .. '*')
                table.sort(keys)
                for _, k in ipairs(keys) do
                  out[#out + 1] = k .. '=' .. redis.sha1hex(redis.call('DUMP', k)) .. '@' .. redis.call('PEXPIRETIME', k)
                end
                return redis.sha1hex(table.concat(out, '\\n'))
                """, ScriptOutputType.VALUE, new String[0], layout.prefix());
    }
}
