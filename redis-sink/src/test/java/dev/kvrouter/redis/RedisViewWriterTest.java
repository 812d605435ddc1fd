package dev.kvrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import org.junit.jupiter.api.Test;

class RedisViewWriterTest {

    @Test
    void aRedisThatIsAwayOrBusyIsRetriedAndARefusalIsNot() {
        assertThat(RedisViewWriter.retryable(new RedisConnectionException("Connection refused"))).isTrue();
        assertThat(RedisViewWriter.retryable(new RedisException("Connection closed"))).isTrue();
        // A standalone connection rejects commands at once while it reconnects (a Redis restarting).
        assertThat(RedisViewWriter.retryable(new RedisException("Currently not connected. Commands are rejected."))).isTrue();
        assertThat(RedisViewWriter.retryable(new RedisCommandExecutionException("LOADING Redis is loading the dataset in memory")))
                .isTrue();
        assertThat(RedisViewWriter.retryable(new RedisCommandExecutionException("WRONGTYPE Operation against a key holding "
                + "the wrong kind of value"))).isFalse();
        assertThat(RedisViewWriter.retryable(new RedisCommandExecutionException("OOM command not allowed"))).isFalse();
    }
}
