package dev.kvrouter.sim;

import java.util.PriorityQueue;

/**
 * A discrete-event clock: events run in time order (ties in the order they were scheduled), and
 * virtual time jumps from one to the next. Unpaced it runs as fast as the events compute; paced,
 * it sleeps so that virtual time tracks wall time × {@code speed} (for a real pipeline in the loop).
 */
public final class VirtualClock {

    private record Event(double atMs, long order, Runnable action) {}

    private final PriorityQueue<Event> queue = new PriorityQueue<>((a, b) -> a.atMs != b.atMs
            ? Double.compare(a.atMs, b.atMs) : Long.compare(a.order, b.order));
    private final double speed;
    private final long originEpochMs;
    private double nowMs;
    private long scheduled;
    private long wallStartNanos = -1;

    /** @param speed virtual seconds per wall second when paced; 0 or less runs unpaced */
    public VirtualClock(double speed) {
        this(speed, System.currentTimeMillis());
    }

    /** @param originEpochMs epoch milliseconds of virtual time 0, for the records' timestamps when unpaced */
    public VirtualClock(double speed, long originEpochMs) {
        this.speed = speed;
        this.originEpochMs = originEpochMs;
    }

    public static VirtualClock unpaced() {
        return new VirtualClock(0);
    }

    public double nowMs() {
        return nowMs;
    }

    /**
     * The timestamp a simulated engine puts on a record now, in epoch milliseconds. Paced (a real
     * pipeline in the loop), the wall clock's: as a real engine stamps with its own clock, which
     * agrees with the pipeline's (Redis {@code TIME}) — every placement made before a record's time
     * is in what the record says, even when the simulation runs behind its pace. Unpaced, virtual
     * time from the origin.
     */
    public long epochMs() {
        return paced() ? System.currentTimeMillis() : originEpochMs + (long) nowMs;
    }

    public boolean paced() {
        return speed > 0;
    }

    public void at(double atMs, Runnable action) {
        if (atMs < nowMs) {
            throw new IllegalArgumentException("cannot schedule in the past: " + atMs + " < " + nowMs);
        }
        queue.add(new Event(atMs, scheduled++, action));
    }

    public void after(double delayMs, Runnable action) {
        at(nowMs + Math.max(0, delayMs), action);
    }

    public boolean isEmpty() {
        return queue.isEmpty();
    }

    /** When the next event is due, in virtual ms; +inf when none is scheduled. */
    public double nextAtMs() {
        return queue.isEmpty() ? Double.POSITIVE_INFINITY : queue.peek().atMs;
    }

    /** Runs events until none are left or the next is later than {@code untilMs}; returns false when it stopped early. */
    public boolean runUntil(double untilMs) throws InterruptedException {
        while (!queue.isEmpty()) {
            Event e = queue.peek();
            if (e.atMs > untilMs) {
                return false;
            }
            queue.poll();
            pace(e.atMs);
            nowMs = e.atMs;
            e.action.run();
        }
        return true;
    }

    private void pace(double atMs) throws InterruptedException {
        if (speed <= 0) {
            return;
        }
        if (wallStartNanos < 0) {
            wallStartNanos = System.nanoTime() - (long) (nowMs / speed * 1e6);
        }
        long dueNanos = wallStartNanos + (long) (atMs / speed * 1e6);
        long waitNanos = dueNanos - System.nanoTime();
        if (waitNanos > 1_000_000) {
            Thread.sleep(waitNanos / 1_000_000, (int) (waitNanos % 1_000_000));
        }
    }
}
