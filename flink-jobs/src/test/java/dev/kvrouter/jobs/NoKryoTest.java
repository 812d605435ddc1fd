package dev.kvrouter.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.kvrouter.jobs.io.HotPrefix;
import dev.kvrouter.jobs.io.ImmutableValueTypeInfo;
import dev.kvrouter.jobs.io.LocationUpdate;
import dev.kvrouter.jobs.io.RawRecord;
import dev.kvrouter.jobs.io.ViewWriteType;
import dev.kvrouter.jobs.policy.LatencyHistogram;
import dev.kvrouter.jobs.ratios.JoinedRequest;
import dev.kvrouter.jobs.ratios.RatioAccumulator;
import dev.kvrouter.jobs.view.model.BlockHolders;
import dev.kvrouter.jobs.view.model.BlockInput;
import dev.kvrouter.jobs.view.model.EngineBlock;
import dev.kvrouter.jobs.view.model.EngineHealthState;
import dev.kvrouter.jobs.view.model.EngineStatus;
import dev.kvrouter.jobs.view.model.Holder;
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
        for (Class<?> type : List.of(RawRecord.class, EngineHealthState.class,
                EngineStatus.class, JoinedRequest.class, RatioAccumulator.class,
                LatencyHistogram.class, dev.kvrouter.jobs.alerts.AlertObservation.class,
                dev.kvrouter.jobs.io.HotPrefix.class, dev.kvrouter.jobs.view.model.ViewResync.class)) {
            TypeInformation<?> info = TypeInformation.of(type);
            assertThat(info).as(type.getSimpleName()).isInstanceOf(PojoTypeInfo.class);
            assertThatCode(() -> info.createSerializer(noGenerics)).as(type.getSimpleName()).doesNotThrowAnyException();
        }
    }

    @Test
    void theLargestStateValuesAndTheBusiestRecordHaveTheirOwnSerializersThatRoundTripEveryField() throws Exception {
        EngineBlock b = new EngineBlock(3);
        b.complete(0, 1, 3);
        b.complete(1, -2, 4);
        b.complete(2, 12, 13);
        b.chainTip = -5;
        b.depth = 6;
        b.anchor = 7;
        b.partial = new int[] {8, 9, 10};
        b.storedAtMs = 11;
        EngineBlock empty = new EngineBlock();
        Holder h = new Holder();
        h.storedAtMs = 1;
        h.epoch = 2;
        h.expireAtMs = 3;
        h.medium = "GPU";
        h.version = 4;
        h.tag = -5;
        h.engine = "e2";
        Holder other = new Holder();
        other.engine = "e1";
        BlockHolders two = BlockHolders.EMPTY.with(h).with(other);
        LocationUpdate stored = LocationUpdate.store(-1, 2, "e1", 3, 4, 5, "GPU", 6);
        LocationUpdate confirmed = LocationUpdate.confirm(7, -8, "e2", 9, 10, 11);
        LocationUpdate removed = LocationUpdate.remove(12, 13, "e3", 14, 15, "removed");
        dev.kvrouter.jobs.io.HotPrefix hot = new dev.kvrouter.jobs.io.HotPrefix();
        hot.rootBlock = 16;
        hot.prefixBlocks = new long[] {16, 17};
        hot.prefixClass = "system";
        hot.requests = 18;
        hot.tsMs = 19;
        dev.kvrouter.jobs.io.HotPrefix held = hot.withHolders(new String[] {"e1", null});
        SerializerConfigImpl noGenerics = new SerializerConfigImpl();
        noGenerics.setGenericTypes(false);
        for (Object value : List.of(b, empty, h, new Holder(), two, BlockHolders.EMPTY, stored, confirmed, removed, new LocationUpdate(),
                BlockInput.of(stored), BlockInput.of(hot), BlockInput.of(held), BlockInput.of(new dev.kvrouter.jobs.io.HotPrefix()))) {
            @SuppressWarnings("unchecked")
            TypeInformation<Object> info = (TypeInformation<Object>) TypeInformation.of(value.getClass());
            assertThat(info).isInstanceOf(dev.kvrouter.jobs.io.ImmutableValueTypeInfo.class);
            var serializer = info.createSerializer(noGenerics);
            assertThat(serializer.copy(value)).as("never changed once stored: a copy is the value").isSameAs(value);
            var out = new org.apache.flink.core.memory.DataOutputSerializer(64);
            serializer.serialize(value, out);
            Object back = serializer.deserialize(new org.apache.flink.core.memory.DataInputDeserializer(out.getCopyOfBuffer()));
            assertThat(back).usingRecursiveComparison().isEqualTo(value);
            var snapshot = serializer.snapshotConfiguration();
            assertThat(snapshot.resolveSchemaCompatibility(serializer.snapshotConfiguration()).isCompatibleAsIs()).isTrue();
        }
    }

    @Test
    void anEngineBlockIsWrittenAsItsTwoArraysWereSoStateFromBeforeRestores() throws Exception {
        // The layout before the first canonical hash moved into the block: canonical hashes with their
        // count, tags with theirs, chain tip, depth, anchor, partial tokens with their count, stored ms.
        for (int completed : new int[] {0, 1, 3}) {
            var old = new org.apache.flink.core.memory.DataOutputSerializer(64);
            old.writeInt(completed);
            for (int c = 0; c < completed; c++) {
                old.writeLong(100 + c);
            }
            old.writeInt(completed);
            for (int c = 0; c < completed; c++) {
                old.writeLong(-200 - c);
            }
            old.writeLong(7);
            old.writeInt(8);
            old.writeLong(9);
            old.writeInt(1);
            old.writeInt(10);
            old.writeLong(11);
            byte[] written = old.getCopyOfBuffer();
            var serializer = TypeInformation.of(EngineBlock.class).createSerializer(new SerializerConfigImpl());
            EngineBlock back = serializer.deserialize(new org.apache.flink.core.memory.DataInputDeserializer(written));
            assertThat(back.completed()).isEqualTo(completed);
            for (int c = 0; c < completed; c++) {
                assertThat(back.canonical(c)).isEqualTo(100 + c);
                assertThat(back.tag(c)).isEqualTo(-200 - c);
            }
            assertThat(back.chainTip).isEqualTo(7);
            assertThat(back.depth).isEqualTo(8);
            assertThat(back.anchor).isEqualTo(9);
            assertThat(back.partial).containsExactly(10);
            assertThat(back.storedAtMs).isEqualTo(11);
            var again = new org.apache.flink.core.memory.DataOutputSerializer(64);
            serializer.serialize(back, again);
            assertThat(again.getCopyOfBuffer()).as("%d completed", completed).isEqualTo(written);
        }
    }

    @Test
    void everyKindOfViewWriteRoundTripsThroughItsStreamType() throws Exception {
        String wholeFleet = "e,".repeat(40_000); // past writeUTF's 64 KB
        List<ViewWrite> writes = List.of(
                ViewWrite.block(-3, 0x8000_0000_0000_0001L, "e1:1a:0,e2:1b:2", 99, 7),
                ViewWrite.block(4, 5, null, 0, 8),
                ViewWrite.engine("e1", null, 9),
                ViewWrite.meta("updated_ms", "10", 10),
                ViewWrite.clientInflight("c1", wholeFleet, 11),
                ViewWrite.classPolicy("chat", "off", 12),
                ViewWrite.ratios("chat|1m", "", 13),
                ViewWrite.meta("naïve-engine", "délai ✓", 14),
                new ViewWrite());
        var serializer = ViewWriteType.INFO.createSerializer(new SerializerConfigImpl());
        var out = new org.apache.flink.core.memory.DataOutputSerializer(64);
        for (ViewWrite w : writes) {
            serializer.serialize(w, out);
        }
        var in = new org.apache.flink.core.memory.DataInputDeserializer(out.getCopyOfBuffer());
        for (ViewWrite w : writes) {
            assertThat(serializer.deserialize(in)).usingRecursiveComparison().isEqualTo(w);
        }
        assertThat(in.available()).as("every byte read back").isZero();
    }

    @Test
    void blocksKeptInStateShareTheirEnginesNameAndAnEmptyPartialChunk() throws Exception {
        // Every location update crossing the network, and every holder restored from a snapshot,
        // arrives with strings of its own: the names must come back as one copy per engine, not two
        // strings per block held for as long as the block is.
        SerializerConfigImpl config = new SerializerConfigImpl();
        List<LocationUpdate> updates = List.of(
                LocationUpdate.store(1, 1, new String("engine-7".toCharArray()), 2, 3, 4, new String("GPU".toCharArray()), 5),
                LocationUpdate.store(6, 6, new String("engine-7".toCharArray()), 7, 8, 9, new String("GPU".toCharArray()), 10));
        List<LocationUpdate> updatesBack = roundTrip(TypeInformation.of(LocationUpdate.class).createSerializer(config), updates);
        assertThat(updatesBack.get(0).engine).isEqualTo("engine-7").isSameAs(updatesBack.get(1).engine);
        assertThat(updatesBack.get(0).medium).isEqualTo("GPU").isSameAs(updatesBack.get(1).medium);

        Holder first = new Holder();
        first.engine = new String("engine-7".toCharArray());
        first.medium = new String("GPU".toCharArray());
        Holder second = new Holder();
        second.engine = new String("engine-7".toCharArray());
        second.medium = new String("GPU".toCharArray());
        List<Holder> holdersBack = roundTrip(TypeInformation.of(Holder.class).createSerializer(config), List.of(first, second));
        assertThat(holdersBack.get(0).engine).isSameAs(holdersBack.get(1).engine).isSameAs(updatesBack.get(0).engine);
        assertThat(holdersBack.get(0).medium).isSameAs(holdersBack.get(1).medium);

        EngineBlock onBoundary = new EngineBlock();
        onBoundary.partial = new int[0];
        EngineBlock withTokens = new EngineBlock();
        withTokens.partial = new int[] {1, 2};
        List<EngineBlock> blocksBack = roundTrip(TypeInformation.of(EngineBlock.class).createSerializer(config),
                List.of(onBoundary, withTokens, new EngineBlock()));
        assertThat(blocksBack.get(0).partial).isSameAs(EngineBlock.NO_PARTIAL);
        assertThat(blocksBack.get(1).partial).containsExactly(1, 2);
        assertThat(blocksBack.get(2).partial).isNull();
    }

    private static <T> List<T> roundTrip(org.apache.flink.api.common.typeutils.TypeSerializer<T> serializer, List<T> values)
            throws Exception {
        var out = new org.apache.flink.core.memory.DataOutputSerializer(64);
        for (T value : values) {
            serializer.serialize(value, out);
        }
        var in = new org.apache.flink.core.memory.DataInputDeserializer(out.getCopyOfBuffer());
        List<T> back = new java.util.ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            back.add(serializer.deserialize(in));
        }
        return back;
    }
}
