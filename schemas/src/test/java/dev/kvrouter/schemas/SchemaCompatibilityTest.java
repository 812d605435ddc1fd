package dev.kvrouter.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityType;
import org.junit.jupiter.api.Test;

/** BACKWARD compatibility of the current schemas with every released version, as the registry enforces it. */
class SchemaCompatibilityTest {

    @Test
    void thereIsAtLeastOneReleasedVersion() {
        assertThat(AvscFiles.releasedVersions()).isNotEmpty();
    }

    @Test
    void currentSchemasReadDataWrittenWithEveryReleasedVersion() {
        Map<String, Schema> current = AvscFiles.parse(AvscFiles.current());
        List<String> problems = new ArrayList<>();
        for (Path version : AvscFiles.releasedVersions()) {
            AvscFiles.parse(version).forEach((name, released) -> {
                Schema now = current.get(name);
                if (now == null) {
                    problems.add(version.getFileName() + ": " + name + " was removed; released types must stay");
                    return;
                }
                var result = SchemaCompatibility.checkReaderWriterCompatibility(now, released);
                if (result.getType() != SchemaCompatibilityType.COMPATIBLE) {
                    problems.add(version.getFileName() + ": " + name + " cannot read data written with the release: "
                            + result.getResult().getIncompatibilities());
                }
            });
        }
        assertThat(problems).isEmpty();
    }

    @Test
    void everyFieldAddedSinceTheNewestReleaseHasADefault() {
        List<Path> versions = AvscFiles.releasedVersions();
        Map<String, Schema> newest = AvscFiles.parse(versions.get(versions.size() - 1));
        List<String> missing = new ArrayList<>();
        AvscFiles.parse(AvscFiles.current()).forEach((name, schema) -> {
            Schema released = newest.get(name);
            if (schema.getType() != Schema.Type.RECORD) {
                return;
            }
            for (Schema.Field f : schema.getFields()) {
                boolean isNew = released == null || released.getField(f.name()) == null;
                if (isNew && released != null && !f.hasDefaultValue()) {
                    missing.add(name + "." + f.name());
                }
            }
        });
        assertThat(missing).as("new fields without a default").isEmpty();
    }

    /** The check above is only worth something if it catches a breaking change. */
    @Test
    void theCheckRejectsANewRequiredField() {
        Schema released = SchemaBuilder.record("R").namespace("t").fields().requiredString("a").endRecord();
        Schema breaking = SchemaBuilder.record("R").namespace("t").fields().requiredString("a").requiredLong("b").endRecord();
        Schema evolving = SchemaBuilder.record("R").namespace("t").fields().requiredString("a")
                .name("b").type().longType().longDefault(0).endRecord();
        assertThat(SchemaCompatibility.checkReaderWriterCompatibility(breaking, released).getType())
                .isEqualTo(SchemaCompatibilityType.INCOMPATIBLE);
        assertThat(SchemaCompatibility.checkReaderWriterCompatibility(evolving, released).getType())
                .isEqualTo(SchemaCompatibilityType.COMPATIBLE);
    }
}
