package dev.kvrouter.sim.engine;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A scheduled failure of one engine, applied to every fleet at the same virtual time:
 * <ul>
 * <li>{@code kill:E@T} — engine E dies at T seconds;</li>
 * <li>{@code restart:E@T[/D]} — engine E restarts at T, down for D seconds (default 0);</li>
 * <li>{@code slow:E@T[/D][xF]} — prefill at F × its rate (default 0.25) for D seconds (default 60);</li>
 * <li>{@code gap:E@T[/N]} — the next N KV event batches (default 5) are lost.</li>
 * </ul>
 */
public record Failure(Kind kind, int engine, double atS, double durationS, double factor, int batches) {

    public enum Kind { KILL, RESTART, SLOW, GAP }

    private static final Pattern SPEC = Pattern.compile("(kill|restart|slow|gap):(\\d+)@([0-9.]+)s?(?:/([0-9.]+)s?)?(?:x([0-9.]+))?");

    public static Failure parse(String spec) {
        Matcher m = SPEC.matcher(spec.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("not a failure: '" + spec + "'; e.g. kill:2@120, restart:3@200/5, slow:1@60/60x0.25, gap:0@100/5");
        }
        Kind kind = Kind.valueOf(m.group(1).toUpperCase(Locale.ROOT));
        int engine = Integer.parseInt(m.group(2));
        double at = Double.parseDouble(m.group(3));
        String arg = m.group(4);
        double factor = m.group(5) == null ? 0.25 : Double.parseDouble(m.group(5));
        return switch (kind) {
            case KILL -> new Failure(kind, engine, at, 0, 1, 0);
            case RESTART -> new Failure(kind, engine, at, arg == null ? 0 : Double.parseDouble(arg), 1, 0);
            case SLOW -> new Failure(kind, engine, at, arg == null ? 60 : Double.parseDouble(arg), factor, 0);
            case GAP -> new Failure(kind, engine, at, 0, 1, arg == null ? 5 : (int) Double.parseDouble(arg));
        };
    }

    public void applyTo(SimEngine e) {
        switch (kind) {
            case KILL -> e.kill();
            case RESTART -> e.restart(durationS * 1000);
            case SLOW -> e.slowDown(factor, durationS * 1000);
            case GAP -> e.dropBatches(batches);
            default -> throw new IllegalStateException();
        }
    }
}
