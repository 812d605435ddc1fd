package dev.kvrouter.bridge;

import dev.kvrouter.dlq.DeadLetter;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.schemas.DeadLetters;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Follows one engine: a ZMQ SUB socket per data-parallel rank (and a DEALER per rank for replay when
 * the engine has a replay endpoint), all served by one thread, since ZMQ sockets are not thread-safe.
 * Each message is judged by its publisher's {@link SequenceTracker}, decoded into a
 * {@link KvEventBatch} and handed to the {@link KafkaOutbox}; what does not decode becomes a
 * {@link DeadLetter}. Stopping closes only this engine's sockets.
 */
final class EngineSubscription implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(EngineSubscription.class);
    static final String DEAD_LETTER_STAGE = "bridge";
    /** vLLM ends a replay with sequence -1 and an empty payload. */
    static final long END_OF_REPLAY = -1;
    private static final int MAX_MESSAGES_PER_WAKEUP = 256;
    private static final int MAX_FRAMES = 16;

    private final EngineSpec spec;
    private final BridgeConfig config;
    private final ZContext zmq;
    private final KafkaOutbox outbox;
    private final BridgeMetrics metrics;
    private final KvEventDecoder decoder = new KvEventDecoder();
    private final Thread thread;
    private volatile boolean running = true;

    EngineSubscription(EngineSpec spec, BridgeConfig config, ZContext zmq, KafkaOutbox outbox, BridgeMetrics metrics) {
        this.spec = spec;
        this.config = config;
        this.zmq = zmq;
        this.outbox = outbox;
        this.metrics = metrics;
        this.thread = new Thread(this::run, "kvr-bridge-" + spec.id());
        thread.setDaemon(true);
    }

    EngineSpec spec() {
        return spec;
    }

    EngineSubscription start() {
        thread.start();
        return this;
    }

    /** One data-parallel rank's sockets and sequence; the sockets can be recreated, the sequence stays. */
    private final class Publisher {
        final int rank;
        final String name;
        final String endpoint;
        final SequenceTracker sequence = new SequenceTracker();
        ZMQ.Socket sub;
        ZMQ.Socket replay;
        long openedAtNanos;
        /** Whether anything arrived since the sockets were (re)created. */
        boolean heard;

        Publisher(int rank) {
            this.rank = rank;
            this.name = spec.publisher(rank);
            this.endpoint = spec.eventsEndpoint(rank);
            open();
        }

        void open() {
            sub = zmq.createSocket(SocketType.SUB);
            sub.setRcvHWM(config.receiveHighWaterMark());
            sub.setMaxMsgSize(config.maxMessageBytes());
            sub.setLinger(0);
            sub.connect(endpoint);
            sub.subscribe(spec.topic().getBytes(StandardCharsets.UTF_8));
            String replayEndpoint = spec.replayEndpoint(rank);
            if (replayEndpoint != null) {
                replay = zmq.createSocket(SocketType.DEALER);
                replay.setMaxMsgSize(config.maxMessageBytes());
                replay.setLinger(0);
                // Requests go only to a connected engine: with the replay endpoint down, asking fails at
                // once (the gap is forwarded) instead of queueing requests, or blocking once the queue is full.
                replay.setImmediate(true);
                replay.connect(replayEndpoint);
            }
            openedAtNanos = System.nanoTime();
            heard = false;
        }

        void close() {
            sub.close();
            if (replay != null) {
                replay.close();
                replay = null;
            }
        }
    }

    private void run() {
        List<Publisher> publishers = new ArrayList<>();
        ZMQ.Poller poller = null;
        long resubscribeAfterNanos = config.resubscribeAfter().toNanos();
        try {
            for (int r = 0; r < spec.dataParallelSize(); r++) {
                publishers.add(new Publisher(r));
            }
            poller = poller(publishers);
            LOG.info("engine {}: subscribed to {} publisher(s) at {}{}", spec.id(), publishers.size(), spec.events(),
                    spec.replay() == null ? " (no replay)" : ", replay at " + spec.replay());
            while (running && !Thread.currentThread().isInterrupted()) {
                // A bounded wait, so a stop request is seen within 100 ms.
                if (poller.poll(100) > 0) {
                    for (int i = 0; i < publishers.size(); i++) {
                        if (poller.pollin(i)) {
                            drain(publishers.get(i));
                        }
                    }
                }
                // jeromq can leave a fresh connection stalled before its handshake (seen with 0.6.0: the
                // greeting sits unread and nothing arrives, ever). A publisher that has sent nothing since
                // its sockets were made gets new ones; an idle engine costs a reconnect per interval.
                long now = System.nanoTime();
                boolean reopened = false;
                for (Publisher p : publishers) {
                    if (!p.heard && now - p.openedAtNanos > resubscribeAfterNanos) {
                        p.close();
                        p.open();
                        metrics.resubscribes.increment();
                        reopened = true;
                        LOG.debug("publisher {}: nothing received for {} ms since connecting; sockets recreated", p.name,
                                config.resubscribeAfter().toMillis());
                    }
                }
                if (reopened) {
                    poller.close();
                    poller = poller(publishers);
                }
            }
        } catch (org.zeromq.ZMQException e) {
            if (running) {
                LOG.error("engine {}: ZMQ failed, the subscription stops: {}", spec.id(), e.toString());
            }
        } catch (RuntimeException e) {
            LOG.error("engine {}: the subscription stops on an unexpected error", spec.id(), e);
        } finally {
            if (poller != null) {
                poller.close();
            }
            publishers.forEach(Publisher::close);
        }
    }

    private ZMQ.Poller poller(List<Publisher> publishers) {
        ZMQ.Poller poller = zmq.createPoller(publishers.size());
        for (Publisher p : publishers) {
            poller.register(p.sub, ZMQ.Poller.POLLIN);
        }
        return poller;
    }

    private void drain(Publisher p) {
        for (int n = 0; n < MAX_MESSAGES_PER_WAKEUP; n++) {
            List<byte[]> frames = receive(p.sub, ZMQ.DONTWAIT);
            if (frames == null) {
                return;
            }
            handle(p, frames);
        }
    }

    /** One whole multipart message, or null when none is waiting. */
    static List<byte[]> receive(ZMQ.Socket socket, int flags) {
        byte[] first = socket.recv(flags);
        if (first == null) {
            return null;
        }
        List<byte[]> frames = new ArrayList<>(3);
        frames.add(first);
        while (socket.hasReceiveMore()) {
            byte[] more = socket.recv(0);
            // Beyond MAX_FRAMES the rest is read and discarded: the message is malformed anyway.
            if (frames.size() < MAX_FRAMES) {
                frames.add(more);
            }
        }
        return frames;
    }

    /** A live message: [topic, sequence (8 bytes big-endian), payload (msgpack)]. */
    private void handle(Publisher p, List<byte[]> frames) {
        long receivedNanos = System.nanoTime();
        p.heard = true;
        metrics.batchReceived(spec.id());
        if (frames.size() != 3) {
            deadLetter(p, frames.get(frames.size() - 1), "expected 3 frames (topic, sequence, payload), got " + frames.size(), null);
            return;
        }
        byte[] seqFrame = frames.get(1);
        byte[] payload = frames.get(2);
        if (seqFrame.length != 8) {
            deadLetter(p, payload, "sequence frame has " + seqFrame.length + " bytes, expected 8 (big-endian)", null);
            return;
        }
        long seq = ByteBuffer.wrap(seqFrame).getLong();
        if (seq < 0) {
            deadLetter(p, payload, "negative sequence number " + seq, null);
            return;
        }
        SequenceTracker.Verdict verdict = p.sequence.observe(seq);
        if (verdict instanceof SequenceTracker.Verdict.Gap gap) {
            fillGap(p, gap);
        } else if (verdict instanceof SequenceTracker.Verdict.Restart restart) {
            metrics.restarted(spec.id());
            LOG.warn("publisher {}: sequence went back from {} to {}: the engine restarted; forwarded, so the job drops its entries",
                    p.name, restart.previous(), seq);
            // The new process's first batches did not reach us (ZMQ reconnects after a restart): ask for them too.
            // The first one forwarded is still at or below the old sequence, so the job sees the restart either way.
            if (seq > 0) {
                fillGap(p, new SequenceTracker.Verdict.Gap(0, seq - 1, seq));
            }
        }
        forward(p, seq, payload, receivedNanos, false);
    }

    /** Counts a gap and forwards what replay recovers of it; the rest is reported as lost. */
    private void fillGap(Publisher p, SequenceTracker.Verdict.Gap gap) {
        long recovered = replay(p, gap);
        long missing = gap.missing() - recovered;
        metrics.gap(spec.id(), missing);
        if (missing > 0) {
            LOG.warn("publisher {}: {} batch(es) lost before sequence {}{}; forwarded with the gap, so the job marks it unsynced",
                    p.name, missing, gap.seq(), p.replay == null ? "" : " (replay recovered " + recovered + ")");
        }
    }

    /** Decodes and queues one batch, or files it as a dead letter. */
    private void forward(Publisher p, long seq, byte[] payload, long receivedNanos, boolean replayed) {
        KvEventDecoder.DecodedBatch decoded;
        try {
            decoded = decoder.decode(payload);
        } catch (UndecodableFrameException e) {
            deadLetter(p, payload, (replayed ? "replayed " : "") + "batch " + seq + ": " + e.getMessage(), e);
            return;
        } catch (RuntimeException | StackOverflowError e) {
            // A fault the decoder's bounds did not foresee is still one frame's: it is filed with the
            // error, and the engine's subscription goes on (an Error here would end its thread for good).
            deadLetter(p, payload, (replayed ? "replayed " : "") + "batch " + seq + ": the decoder failed: " + e, e);
            return;
        }
        // The port says which rank published; the job keys engines by id and that rank (none without data parallelism).
        KvEventBatch batch = KvEventBatch.newBuilder().setEngineId(spec.id()).setDataParallelRank(spec.rank(p.rank))
                .setModel(spec.model()).setSeq(seq).setTsMs(decoded.tsMs()).setEvents(decoded.events()).build();
        outbox.offer(batch, receivedNanos);
    }

    /**
     * Asks the publisher's replay endpoint for the batches of the gap and forwards those it gets, in
     * order; returns how many it got. Nothing (0) without a replay endpoint, for a gap larger than
     * replay.max-batches, or when the engine no longer has them.
     */
    private long replay(Publisher p, SequenceTracker.Verdict.Gap gap) {
        if (p.replay == null || gap.missing() > config.replayMaxBatches()) {
            return 0;
        }
        // Leftovers of an earlier replay that timed out must not be taken for this one's answer.
        while (receive(p.replay, ZMQ.DONTWAIT) != null) {
            // discarded
        }
        // [empty delimiter, start sequence]: what vLLM's ROUTER expects after the DEALER's identity.
        if (!p.replay.send(new byte[0], ZMQ.SNDMORE | ZMQ.DONTWAIT)) {
            LOG.warn("publisher {}: replay endpoint {} is not connected; the gap {}..{} is forwarded", p.name,
                    spec.replayEndpoint(p.rank), gap.missingFrom(), gap.missingTo());
            return 0;
        }
        p.replay.send(ByteBuffer.allocate(8).putLong(gap.missingFrom()).array(), 0);
        metrics.replayRequested(spec.id());
        long deadline = System.nanoTime() + config.replayTimeout().toNanos();
        long next = gap.missingFrom();
        long recovered = 0;
        try (ZMQ.Poller wait = zmq.createPoller(1)) {
            wait.register(p.replay, ZMQ.Poller.POLLIN);
            while (next <= gap.missingTo()) {
                long leftMs = (deadline - System.nanoTime()) / 1_000_000;
                if (leftMs <= 0 || wait.poll(leftMs) <= 0) {
                    LOG.warn("publisher {}: replay of {}..{} timed out after {} ms at {}", p.name, gap.missingFrom(), gap.missingTo(),
                            config.replayTimeout().toMillis(), next);
                    break;
                }
                List<byte[]> frames = receive(p.replay, 0);
                // ROUTER replies to a DEALER start with the empty delimiter frame.
                int first = !frames.isEmpty() && frames.get(0).length == 0 ? 1 : 0;
                if (frames.size() - first != 2 || frames.get(first).length != 8) {
                    LOG.warn("publisher {}: malformed replay reply of {} frame(s); replay abandoned", p.name, frames.size());
                    break;
                }
                long seq = ByteBuffer.wrap(frames.get(first)).getLong();
                if (seq == END_OF_REPLAY) {
                    break;
                }
                if (seq < next) {
                    continue; // the engine replays everything from the start sequence on; skip what we have
                }
                if (seq > gap.missingTo()) {
                    break;
                }
                metrics.replayed(spec.id());
                recovered++;
                forward(p, seq, frames.get(first + 1), System.nanoTime(), true);
                next = seq + 1;
            }
        }
        return recovered;
    }

    private void deadLetter(Publisher p, byte[] raw, String reason, Throwable error) {
        metrics.undecodable(spec.id());
        LOG.warn("publisher {}: {} (filed to the dead-letter topic)", p.name, reason);
        outbox.offer(DeadLetters.of(p.name.getBytes(StandardCharsets.UTF_8), raw)
                .setSourceTopic(p.endpoint)
                .setSourcePartition(-1)
                .setSourceOffset(-1)
                .setStage(DEAD_LETTER_STAGE)
                .setReason("publisher " + p.name + ": " + reason)
                .setErrorClass(error == null ? null : error.getClass().getName())
                .setTsMs(System.currentTimeMillis())
                .build());
    }

    /** Stops the thread and closes this engine's sockets; waits at most a few seconds. */
    @Override
    public void close() {
        running = false;
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
