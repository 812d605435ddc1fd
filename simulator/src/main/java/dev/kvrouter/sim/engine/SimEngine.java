package dev.kvrouter.sim.engine;

import dev.kvrouter.events.AllBlocksCleared;
import dev.kvrouter.events.BlockRemoved;
import dev.kvrouter.events.BlockStored;
import dev.kvrouter.events.EngineLifecycle;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.events.OutcomeStatus;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.schemas.BlockHashes;
import dev.kvrouter.sim.VirtualClock;
import dev.kvrouter.sim.sink.EventSink;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A simulated inference engine, indistinguishable from a real one to the pipeline: a vLLM-style
 * prefix cache ({@link PrefixCache}), at most {@code maxRunning} sequences with a FIFO queue,
 * prefills one after another at a modeled rate (cached tokens skipped), decode at a per-sequence
 * rate; it publishes KV event batches with engine-specific hashes and a per-engine sequence,
 * heartbeats, and one outcome per request. Failures: {@link #kill}, {@link #restart},
 * {@link #slowDown}, {@link #dropBatches}.
 */
public final class SimEngine {

    private final class Job {
        final Placement placement;
        final double arrivalMs;
        final int fullBlocks;
        final int totalBlocks;
        int matched = -1;
        /** Blocks of the chain cached so far: the matched ones, then each prefill chunk's as it completes. */
        int storedUpTo;
        double prefillStartMs;
        double prefillEndMs;

        Job(Placement placement, double arrivalMs) {
            this.placement = placement;
            this.arrivalMs = arrivalMs;
            int prompt = placement.request().promptTokens();
            this.fullBlocks = Math.min(placement.chain().length, prompt / config.blockTokens());
            this.totalBlocks = (prompt + config.blockTokens() - 1) / config.blockTokens();
        }
    }

    /** Hashes per BlockStored / BlockRemoved, well under the job's {@code limits.max-hashes-per-event}. */
    static final int MAX_HASHES_PER_EVENT = 1_024;

    private final String id;
    private final EngineConfig config;
    private final VirtualClock clock;
    private final EventSink sink;
    private final Consumer<Completion> onCompletion;
    private final PrefixCache cache;
    private final ArrayDeque<Job> waiting = new ArrayDeque<>();
    private final Set<Job> running = new HashSet<>();

    private boolean up = true;
    /** Bumped by every kill and restart: events scheduled before it are void. */
    private int generation;
    /** Restarts so far: part of the engine's hash seed, as a restarted vLLM reseeds its hashes. */
    private int restarts;
    private long nextSeq;
    private int batchesToDrop;
    private int batchesDropped;
    private double prefillFreeAtMs;
    private double prefillFactor = 1;
    /** Told when a request's prefill ends: its first token (an HTTP engine streams it then). */
    private Consumer<Placement> onFirstToken = p -> {};

    /**
     * @param clock         also the records' timestamps ({@link VirtualClock#epochMs()})
     * @param onCompletion  told of every request's end, OK or not
     */
    public SimEngine(String id, EngineConfig config, VirtualClock clock, EventSink sink, Consumer<Completion> onCompletion) {
        this.id = id;
        this.config = config;
        this.clock = clock;
        this.sink = sink;
        this.onCompletion = onCompletion;
        this.cache = new PrefixCache(config.capacityBlocks());
    }

    public String id() {
        return id;
    }

    /** Who is told when a request's first token is out (its prefill done); replaces the previous listener. */
    public void onFirstToken(Consumer<Placement> listener) {
        this.onFirstToken = listener;
    }

    public EngineConfig config() {
        return config;
    }

    public boolean up() {
        return up;
    }

    public int waiting() {
        return waiting.size();
    }

    public int running() {
        return running.size();
    }

    /**
     * Perfect knowledge, for the oracle: how long a request placed here now would wait before its
     * prefill starts — for a running slot (the running requests' ends, in order, after the waiting
     * ones ahead take theirs) and for the prefill queue ahead of it (the waiting requests' uncached
     * tokens at the engine's current speed). {@code +inf} when the engine is down.
     */
    public double startDelayMs() {
        if (!up) {
            return Double.POSITIVE_INFINITY;
        }
        double now = clock.nowMs();
        double[] ends = running.stream().mapToDouble(j -> j.prefillEndMs
                + j.placement.request().outputTokens() * 1000.0 / config.decodeTokensPerS()).sorted().toArray();
        int needed = waiting.size() + 1 - (config.maxRunning() - running.size());
        double slotAt = now;
        if (needed > 0 && ends.length > 0) {
            // Past the running requests' ends, later slots free at the same pace (an estimate; the oracle's only one).
            double pace = (ends[ends.length - 1] - now) / ends.length;
            slotAt = needed <= ends.length ? ends[needed - 1] : ends[ends.length - 1] + (needed - ends.length) * Math.max(pace, 0);
        }
        double prefillAt = Math.max(now, prefillFreeAtMs);
        for (Job j : waiting) {
            int matched = Math.min(cache.prefixMatch(j.placement.chain()), j.fullBlocks);
            prefillAt += prefillMs(j.placement.request().promptTokens() - matched * config.blockTokens());
        }
        return Math.max(slotAt, prefillAt) - now;
    }

    /** Milliseconds to prefill this many uncached tokens at the engine's current speed (slowed down or not). */
    public double prefillMs(int tokens) {
        return Math.max(1, tokens) * 1000.0 / (config.prefillTokensPerS() * prefillFactor);
    }

    /** Requests waiting or running: the load every policy and the view use. */
    public int load() {
        return waiting.size() + running.size();
    }

    public PrefixCache cache() {
        return cache;
    }

    public long nextSeq() {
        return nextSeq;
    }

    public int batchesDropped() {
        return batchesDropped;
    }

    /** Blocks of the chain this engine actually holds as a consecutive prefix (the oracle's knowledge). */
    public int cachedPrefix(long[] chain) {
        return up ? cache.prefixMatch(chain) : 0;
    }

    /**
     * Blocks of the chain that a request here is computing now and the engine does not hold yet, as
     * the consecutive prefix it shares with the chain (0 when none): waiting requests, and running ones
     * still prefilling past what they matched. The oracle's knowledge of a copy on its way.
     */
    public int computingPrefix(long[] chain) {
        if (!up) {
            return 0;
        }
        double now = clock.nowMs();
        int held = cache.prefixMatch(chain);
        int longest = 0;
        for (Job j : waiting) {
            int s = shared(chain, j.placement.chain(), j.fullBlocks);
            if (s > held) {
                longest = Math.max(longest, s);
            }
        }
        for (Job j : running) {
            int s = shared(chain, j.placement.chain(), j.fullBlocks);
            if (j.prefillEndMs > now && s > Math.max(held, j.matched)) {
                longest = Math.max(longest, s);
            }
        }
        return longest;
    }

    private static int shared(long[] a, long[] b, int limit) {
        int n = 0;
        int max = Math.min(limit, Math.min(a.length, b.length));
        while (n < max && a[n] == b[n]) {
            n++;
        }
        return n;
    }

    /** A request arrives; on a dead engine it fails at once, as the connection would. */
    public void submit(Placement placement) {
        Job job = new Job(placement, clock.nowMs());
        if (!up) {
            fail(job, OutcomeStatus.ERROR);
            return;
        }
        waiting.add(job);
        admit();
    }

    /** Starts the heartbeats, for as long as {@code keepBeating} says; each report is sent only while up. */
    public void startHeartbeats(java.util.function.BooleanSupplier keepBeating) {
        if (!sink.enabled()) {
            return;
        }
        clock.after(0, new Runnable() {
            @Override
            public void run() {
                if (up) {
                    sink.load(loadReport());
                }
                if (keepBeating.getAsBoolean()) {
                    clock.after(config.heartbeatMs(), this);
                }
            }
        });
    }

    public EngineLoad loadReport() {
        return EngineLoad.newBuilder().setEngineId(id).setModel(config.model()).setTsMs(clock.epochMs())
                .setWaiting(waiting.size()).setRunning(running.size())
                .setKvBlocksUsed(cache.pinned()).setKvBlocksCapacity(config.capacityBlocks())
                .setLifecycle(EngineLifecycle.READY).setHeartbeatIntervalMs(config.heartbeatMs()).setMaxRunning(config.reportsSlots() ? config.maxRunning() : 0).build();
    }

    // ---- failures --------------------------------------------------------------------------

    /** The engine dies: no more events or heartbeats; its queued and running requests fail; its cache is gone. */
    public void kill() {
        if (!up) {
            return;
        }
        up = false;
        dropEverything();
    }

    /**
     * The engine restarts: its requests fail, its cache is cleared, and after {@code downMs} it is
     * back with its sequence at 0, announcing {@code AllBlocksCleared} (also revives a dead engine).
     */
    public void restart(double downMs) {
        up = false;
        dropEverything();
        int gen = generation;
        clock.after(downMs, () -> {
            if (gen != generation) {
                return;
            }
            up = true;
            restarts++;
            nextSeq = 0;
            batchesToDrop = 0;
            prefillFreeAtMs = clock.nowMs();
            emit(List.of(AllBlocksCleared.newBuilder().build()));
        });
    }

    /** Prefill runs at {@code factor} × its rate for {@code durationMs}: the engine gets busy, its cache intact. */
    public void slowDown(double factor, double durationMs) {
        prefillFactor = factor;
        clock.after(durationMs, () -> prefillFactor = 1);
    }

    /** The next {@code n} KV event batches are lost: their sequence numbers are used but never sent. */
    public void dropBatches(int n) {
        batchesToDrop += n;
    }

    private void dropEverything() {
        generation++;
        List<Job> lost = new ArrayList<>(running);
        lost.addAll(waiting);
        running.clear();
        waiting.clear();
        cache.clear();
        for (Job job : lost) {
            fail(job, OutcomeStatus.ERROR);
        }
    }

    // ---- scheduling ------------------------------------------------------------------------

    private void admit() {
        while (up && running.size() < config.maxRunning() && !waiting.isEmpty()) {
            Job job = waiting.peek();
            long[] chain = job.placement.chain();
            if (job.totalBlocks > config.capacityBlocks()) {
                waiting.poll();
                fail(job, OutcomeStatus.REJECTED);
                continue;
            }
            int matched = cache.prefixMatch(chain);
            matched = Math.min(matched, job.fullBlocks);
            int fresh = job.totalBlocks - matched;
            if (!cache.canAllocate(chain, matched, fresh)) {
                return; // head of line waits for running requests to free KV, as vLLM's scheduler does
            }
            waiting.poll();
            List<Long> evicted = cache.admit(chain, matched, fresh);
            if (!evicted.isEmpty() && sink.enabled()) {
                List<Object> events = new ArrayList<>();
                for (int from = 0; from < evicted.size(); from += MAX_HASHES_PER_EVENT) {
                    List<ByteBuffer> hashes = new ArrayList<>();
                    for (long h : evicted.subList(from, Math.min(evicted.size(), from + MAX_HASHES_PER_EVENT))) {
                        hashes.add(BlockHashes.ofUnsigned64(engineHash(h)));
                    }
                    events.add(BlockRemoved.newBuilder().setBlockHashes(hashes).setMedium("GPU").build());
                }
                emit(events);
            } else if (!evicted.isEmpty()) {
                emit(List.of()); // the batch still takes its sequence number
            }
            running.add(job);
            job.matched = matched;
            int prefillTokens = Math.max(1, job.placement.request().promptTokens() - matched * config.blockTokens());
            job.storedUpTo = matched;
            job.prefillStartMs = Math.max(clock.nowMs(), prefillFreeAtMs);
            job.prefillEndMs = job.prefillStartMs + prefillMs(prefillTokens);
            prefillFreeAtMs = job.prefillEndMs;
            int gen = generation;
            // Chunked prefill: each chunk's full blocks are cached, and announced, as the chunk completes.
            int chunk = config.prefillChunkTokens();
            for (int done = chunk; chunk > 0 && done < prefillTokens; done += chunk) {
                int upTo = Math.min(job.fullBlocks, (matched * config.blockTokens() + done) / config.blockTokens());
                double at = job.prefillStartMs + (job.prefillEndMs - job.prefillStartMs) * done / prefillTokens;
                clock.at(at, () -> {
                    if (gen == generation) {
                        storeUpTo(job, upTo);
                    }
                });
            }
            clock.at(job.prefillEndMs, () -> {
                if (gen == generation) {
                    prefilled(job);
                }
            });
        }
    }

    /** The job's blocks up to {@code upTo} are computed: cached, and the new ones announced in one batch. */
    private void storeUpTo(Job job, int upTo) {
        if (upTo <= job.storedUpTo) {
            return;
        }
        int from = job.storedUpTo;
        boolean[] isNew = cache.store(job.placement.chain(), from, upTo);
        job.storedUpTo = upTo;
        if (sink.enabled()) {
            List<Object> events = storedRuns(job, from, isNew);
            if (!events.isEmpty()) {
                emit(events);
            }
        } else if (anyTrue(isNew)) {
            emit(List.of());
        }
    }

    private void prefilled(Job job) {
        storeUpTo(job, job.fullBlocks);
        onFirstToken.accept(job.placement);
        double decodeMs = job.placement.request().outputTokens() * 1000.0 / config.decodeTokensPerS();
        int gen = generation;
        clock.after(decodeMs, () -> {
            if (gen == generation) {
                finished(job);
            }
        });
    }

    private void finished(Job job) {
        running.remove(job);
        cache.release(job.placement.chain(), job.fullBlocks, job.totalBlocks - job.fullBlocks);
        complete(job, OutcomeStatus.OK);
        admit();
    }

    private void fail(Job job, OutcomeStatus status) {
        complete(job, status);
    }

    private void complete(Job job, OutcomeStatus status) {
        boolean ok = status == OutcomeStatus.OK;
        int cachedBlocks = ok ? job.matched : -1;
        int cachedTokens = ok ? job.matched * config.blockTokens() : 0;
        double queueMs = ok ? job.prefillStartMs - job.arrivalMs : 0;
        double ttftMs = ok ? job.prefillEndMs - job.arrivalMs : 0;
        // The request's own figures count the time its balancer held it; the engine reports what it saw.
        double heldMs = job.placement.heldMs();
        Completion c = new Completion(job.placement, status, job.totalBlocks, cachedBlocks, cachedTokens, queueMs + (ok ? heldMs : 0),
                ttftMs + (ok ? heldMs : 0), clock.nowMs());
        if (sink.enabled()) {
            sink.outcome(RequestOutcome.newBuilder().setRequestId(job.placement.requestId()).setEngineId(id)
                    .setPromptTokens(job.placement.request().promptTokens()).setCachedTokens(cachedTokens)
                    .setQueueMs(queueMs).setTtftMs(ttftMs).setOutputTokens(ok ? job.placement.request().outputTokens() : 0)
                    .setStatus(status).setTsMs(clock.epochMs()).build());
        }
        onCompletion.accept(c);
    }

    // ---- events ----------------------------------------------------------------------------

    /**
     * One BlockStored per run of newly cached blocks, each with its parent's engine hash and its tokens;
     * {@code isNew[i]} is chain block {@code from + i}.
     */
    private List<Object> storedRuns(Job job, int from0, boolean[] isNew) {
        List<Object> events = new ArrayList<>();
        long[] chain = job.placement.chain();
        int[] tokens = null;
        int bt = config.blockTokens();
        int i = 0;
        while (i < isNew.length) {
            if (!isNew[i]) {
                i++;
                continue;
            }
            int from = from0 + i;
            int j = i;
            while (j < isNew.length && isNew[j] && j - i < MAX_HASHES_PER_EVENT) {
                j++;
            }
            int to = from0 + j;
            if (tokens == null) {
                tokens = job.placement.request().prompt().tokens();
            }
            List<ByteBuffer> hashes = new ArrayList<>(to - from);
            List<Integer> ids = new ArrayList<>((to - from) * bt);
            for (int b = from; b < to; b++) {
                hashes.add(BlockHashes.ofUnsigned64(engineHash(chain[b])));
                for (int t = b * bt; t < (b + 1) * bt; t++) {
                    ids.add(tokens[t]);
                }
            }
            events.add(BlockStored.newBuilder().setBlockHashes(hashes)
                    .setParentBlockHash(from == 0 ? null : BlockHashes.ofUnsigned64(engineHash(chain[from - 1])))
                    .setTokenIds(ids).setBlockSize(bt).setMedium("GPU").build());
            i = j;
        }
        return events;
    }

    private static boolean anyTrue(boolean[] values) {
        for (boolean v : values) {
            if (v) {
                return true;
            }
        }
        return false;
    }

    /** Sends a batch with the next sequence number, unless batches are being lost. */
    private void emit(List<Object> events) {
        long seq = nextSeq++;
        if (batchesToDrop > 0) {
            batchesToDrop--;
            batchesDropped++;
            return;
        }
        if (sink.enabled()) {
            sink.kvEvents(KvEventBatch.newBuilder().setEngineId(id).setModel(config.model()).setSeq(seq)
                    .setTsMs(clock.epochMs()).setEvents(events).build());
        }
    }

    /** The engine's own hash of a block: reproducible only inside this engine and this run of it. */
    long engineHash(long canonical) {
        long z = canonical ^ (id.hashCode() * 0x9E3779B97F4A7C15L) ^ (restarts * 0xD1B54A32D192ED03L);
        z = (z ^ (z >>> 33)) * 0xFF51AFD7ED558CCDL;
        z = (z ^ (z >>> 33)) * 0xC4CEB9FE1A85EC53L;
        return z ^ (z >>> 33);
    }

}
