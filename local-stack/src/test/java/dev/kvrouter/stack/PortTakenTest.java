package dev.kvrouter.stack;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What each service writes when the port the stack chose for it was taken meanwhile: the stack then starts again on others. */
class PortTakenTest {

    @Test
    void eachServicesWordsForATakenPortAreRecognisedAndNothingElseIs() {
        assertThat(LocalStack.PORT_IN_USE.matcher("ERROR [io.quarkus.runtime.ApplicationLifecycleManager] (main) Port 40137 seems to be "
                + "in use by another process. Quarkus may already be running").find()).as("Apicurio (Quarkus)").isTrue();
        assertThat(LocalStack.PORT_IN_USE.matcher("org.apache.kafka.common.KafkaException: Socket server failed to bind to 127.0.0.1:9092: "
                + "Address already in use.").find()).as("Kafka").isTrue();
        assertThat(LocalStack.PORT_IN_USE.matcher("# Warning: Could not create server TCP listening socket 127.0.0.1:6379: bind: Address "
                + "already in use").find()).as("redis-server").isTrue();
        assertThat(LocalStack.PORT_IN_USE.matcher("java.lang.OutOfMemoryError: Java heap space").find()).isFalse();
    }
}
