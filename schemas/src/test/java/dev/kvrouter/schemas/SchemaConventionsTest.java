package dev.kvrouter.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.junit.jupiter.api.Test;

/** The house rules for schemas: one type per file at its namespace path, everything documented, enums with a default. */
class SchemaConventionsTest {

    private final Map<Path, Schema> files = AvscFiles.files(AvscFiles.current());

    @Test
    void eachFileHoldsOneTypeAtItsNamespacePath() {
        List<String> misplaced = new ArrayList<>();
        files.forEach((file, schema) -> {
            Path expected = AvscFiles.current().resolve(schema.getFullName().replace('.', '/') + ".avsc");
            if (!file.normalize().equals(expected.normalize())) {
                misplaced.add(schema.getFullName() + " is in " + file + ", expected " + expected);
            }
        });
        assertThat(misplaced).isEmpty();
        assertThat(files).hasSizeGreaterThanOrEqualTo(KvrSchemas.TOPIC_VALUES.size());
    }

    @Test
    void everyTypeAndFieldIsDocumented() {
        List<String> undocumented = new ArrayList<>();
        files.values().forEach(schema -> {
            if (isBlank(schema.getDoc())) {
                undocumented.add(schema.getFullName());
            }
            if (schema.getType() == Schema.Type.RECORD) {
                schema.getFields().stream().filter(f -> isBlank(f.doc()))
                        .forEach(f -> undocumented.add(schema.getFullName() + "." + f.name()));
            }
        });
        assertThat(undocumented).isEmpty();
    }

    @Test
    void everyEnumHasADefaultSoNewSymbolsDoNotBreakOldReaders() {
        List<String> noDefault = files.values().stream()
                .filter(s -> s.getType() == Schema.Type.ENUM && s.getEnumDefault() == null)
                .map(Schema::getFullName).toList();
        assertThat(noDefault).isEmpty();
    }

    @Test
    void theGeneratedClassesAreTheFilesSchemas() {
        Map<String, Schema> parsed = AvscFiles.parse(AvscFiles.current());
        // Generated classes carry avro.java.string properties; the parsing form and the docs must match.
        for (Schema generated : KvrSchemas.TOPIC_VALUES) {
            Schema file = parsed.get(generated.getFullName());
            assertThat(SchemaNormalization.parsingFingerprint64(generated))
                    .as(generated.getFullName()).isEqualTo(SchemaNormalization.parsingFingerprint64(file));
            assertThat(generated.getFields().stream().map(Schema.Field::doc).toList())
                    .isEqualTo(file.getFields().stream().map(Schema.Field::doc).toList());
        }
    }

    private static boolean isBlank(String s) {
        return s == null || s.isBlank();
    }
}
