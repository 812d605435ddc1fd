package dev.kvrouter.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.kvrouter.jobs.policy.LatencyHistogram;
import dev.kvrouter.jobs.ratios.JoinedRequest;
import dev.kvrouter.jobs.ratios.RatioAccumulator;
import dev.kvrouter.jobs.view.model.EngineBlock;
import dev.kvrouter.jobs.view.model.EngineHealthState;
import dev.kvrouter.jobs.view.model.EngineStatus;
import dev.kvrouter.jobs.view.model.Holder;
import dev.kvrouter.jobs.view.model.LocationUpdate;
import dev.kvrouter.jobs.view.model.RawRecord;
import dev.kvrouter.redis.ViewWrite;
import java.util.List;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.PojoTypeInfo;
import org.junit.jupiter.api.Test;

/** Every type the jobs keep in state or send between operators is a POJO Flink serializes itself. */
class NoKryoTest {

    @Test
    void stateAndStreamTypesNeedNoKryo() {
        SerializerConfigImpl noGenerics = new SerializerConfigImpl();
        noGenerics.setGenericTypes(false);
        for (Class<?> type : List.of(RawRecord.class, LocationUpdate.class, EngineBlock.class, EngineHealthState.class,
                EngineStatus.class, Holder.class, ViewWrite.class, JoinedRequest.class, RatioAccumulator.class,
                LatencyHistogram.class, dev.kvrouter.jobs.alerts.AlertObservation.class,
                dev.kvrouter.jobs.replicas.HotPrefix.class)) {
            TypeInformation<?> info = TypeInformation.of(type);
            assertThat(info).as(type.getSimpleName()).isInstanceOf(PojoTypeInfo.class);
            assertThatCode(() -> info.createSerializer(noGenerics)).as(type.getSimpleName()).doesNotThrowAnyException();
        }
    }
}
