package dev.kvrouter.bridge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class BoundedBodyTest {

    private final AtomicBoolean cancelled = new AtomicBoolean();

    private HttpResponse.BodySubscriber<String> subscriber(int max) {
        HttpResponse.BodySubscriber<String> s = BoundedBody.handler(max).apply(null);
        s.onSubscribe(new Flow.Subscription() {
            @Override
            public void request(long n) {}

            @Override
            public void cancel() {
                cancelled.set(true);
            }
        });
        return s;
    }

    private static ByteBuffer text(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aPageWithinTheBoundIsReadWhole() throws Exception {
        HttpResponse.BodySubscriber<String> s = subscriber(17); // exactly the page
        s.onNext(List.of(text("vllm:a 1\n"), text("vllm:b 2")));
        s.onComplete();
        assertThat(s.getBody().toCompletableFuture().get()).isEqualTo("vllm:a 1\nvllm:b 2");
        assertThat(cancelled).isFalse();
    }

    @Test
    void aPageOverTheBoundIsCancelledAndFailsSayingWhy() {
        HttpResponse.BodySubscriber<String> s = subscriber(16);
        s.onNext(List.of(text("0123456789")));
        s.onNext(List.of(text("0123456789")));
        s.onNext(List.of(text("more that arrives after the cancel")));
        s.onComplete();
        assertThat(cancelled).isTrue();
        assertThatThrownBy(() -> s.getBody().toCompletableFuture().get()).hasMessageContaining("the page is over 16 bytes");
    }
}
