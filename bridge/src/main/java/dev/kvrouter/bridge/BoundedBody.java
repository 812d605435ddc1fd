package dev.kvrouter.bridge;

import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * An HTTP body read as text up to a bound: past it the download is cancelled and the body fails
 * with what the bound is, instead of a page of any size held in memory (an engine's {@code /metrics}
 * is a few hundred KiB; a misconfigured URL can be anything).
 */
final class BoundedBody implements HttpResponse.BodySubscriber<String> {

    private final int maxBytes;
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final CompletableFuture<String> result = new CompletableFuture<>();
    private Flow.Subscription subscription;

    private BoundedBody(int maxBytes) {
        this.maxBytes = maxBytes;
    }

    static HttpResponse.BodyHandler<String> handler(int maxBytes) {
        return info -> new BoundedBody(maxBytes);
    }

    @Override
    public CompletionStage<String> getBody() {
        return result;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(List<ByteBuffer> items) {
        if (result.isDone()) {
            return; // (cancelled: what still arrives is dropped)
        }
        for (ByteBuffer b : items) {
            if (bytes.size() + b.remaining() > maxBytes) {
                subscription.cancel();
                result.completeExceptionally(new IllegalStateException("the page is over " + maxBytes + " bytes"));
                return;
            }
            byte[] chunk = new byte[b.remaining()];
            b.get(chunk);
            bytes.write(chunk, 0, chunk.length);
        }
    }

    @Override
    public void onError(Throwable t) {
        result.completeExceptionally(t);
    }

    @Override
    public void onComplete() {
        result.complete(bytes.toString(StandardCharsets.UTF_8));
    }
}
