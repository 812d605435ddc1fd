package dev.kvrouter.schemas;

import dev.kvrouter.alerts.Alert;
import dev.kvrouter.dlq.DeadLetter;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.EngineStateChange;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.view.ViewChange;
import java.util.List;
import org.apache.avro.Schema;

/** The top-level records that travel on Kafka topics, one per topic value. */
public final class KvrSchemas {

    public static final List<Schema> TOPIC_VALUES = List.of(
            KvEventBatch.getClassSchema(),
            EngineLoad.getClassSchema(),
            EngineStateChange.getClassSchema(),
            RoutingDecision.getClassSchema(),
            RequestOutcome.getClassSchema(),
            ViewChange.getClassSchema(),
            ClassRatios.getClassSchema(),
            Alert.getClassSchema(),
            dev.kvrouter.replicas.ReplicationRecommendation.getClassSchema(),
            DeadLetter.getClassSchema());

    private KvrSchemas() {}
}
