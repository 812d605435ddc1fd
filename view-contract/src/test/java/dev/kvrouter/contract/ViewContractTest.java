package dev.kvrouter.contract;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The view's contract (kvr-view.yaml) read as YAML against what the build generated from it (ViewContract, the
 * library's Lua head, the gateway's module) and against the places that still spell it by hand: the library's read of
 * the meta hash, the engine entry's codec, redis-sink/README.md.
 */
class ViewContractTest {

    private static JsonNode contract;

    @BeforeAll
    static void readContract() throws IOException {
        try (InputStream in = ViewContractTest.class.getResourceAsStream("/kvr-view.yaml")) {
            assertThat(in).as("kvr-view.yaml on the classpath").isNotNull();
            contract = new ObjectMapper(new YAMLFactory()).readTree(in);
        }
    }

    private static List<String> names(String section) {
        List<String> names = new ArrayList<>();
        contract.get(section).forEach(e -> names.add(e.get("name").asText()));
        return names;
    }

    private static List<String> constants(Class<?> holder, Class<?> type) {
        return Arrays.stream(holder.getDeclaredFields())
                .filter(f -> Modifier.isStatic(f.getModifiers()) && f.getType() == type && !f.getName().startsWith("DEFAULT_")
                        && !f.getName().equals("COUNT") && !f.getName().equals("SIZE"))
                .map(Field::getName).toList();
    }

    @Test
    void everyEntryHasANameAndADescriptionAndNamesAreUnique() {
        contract.fields().forEachRemaining(section -> {
            if (!section.getValue().isArray()) {
                return;
            }
            List<String> seen = new ArrayList<>();
            section.getValue().forEach(e -> {
                assertThat(e.hasNonNull("name")).as(section.getKey() + " entry " + e).isTrue();
                assertThat(e.path("description").asText()).as(section.getKey() + " " + e.get("name")).isNotBlank();
                assertThat(seen).as(section.getKey()).doesNotContain(e.get("name").asText());
                seen.add(e.get("name").asText());
            });
        });
    }

    @Test
    void theGeneratedJavaConstantsAreTheContractsInItsOrder() throws Exception {
        assertThat(ViewContract.LAYOUT).isEqualTo(contract.get("layout").asInt());
        assertThat(constants(ViewContract.Functions.class, String.class))
                .containsExactlyElementsOf(names("functions").stream().map(String::toUpperCase).toList());
        for (JsonNode e : contract.get("functions")) {
            assertThat(ViewContract.Functions.class.getField(e.get("name").asText().toUpperCase()).get(null)).isEqualTo(e.get("name").asText());
        }
        for (JsonNode e : contract.get("keys")) {
            assertThat(ViewContract.Keys.class.getField(e.get("name").asText().toUpperCase()).get(null)).isEqualTo(e.get("key").asText());
        }
        for (JsonNode e : contract.get("reservation_keys")) {
            assertThat(ViewContract.ReservationKeys.class.getField(e.get("name").asText().toUpperCase()).get(null))
                    .isEqualTo(e.get("suffix").asText());
        }
        for (JsonNode e : contract.get("meta")) {
            String name = e.get("name").asText();
            assertThat(ViewContract.Meta.class.getField(name.toUpperCase()).get(null)).isEqualTo(name);
            String d = e.get("default").asText();
            if (!d.equals("none")) {
                assertThat(((Number) ViewContract.Meta.class.getField("DEFAULT_" + name.toUpperCase()).get(null)).doubleValue())
                        .as(name).isEqualTo(Double.parseDouble(d));
            }
        }
        List<String> engineFields = names("engine_fields");
        for (int i = 0; i < engineFields.size(); i++) {
            assertThat(ViewContract.EngineFields.class.getField(engineFields.get(i).toUpperCase()).getInt(null)).isEqualTo(i);
        }
        assertThat(ViewContract.EngineFields.COUNT).isEqualTo(engineFields.size());
        List<String> answer = names("answer");
        for (int i = 0; i < answer.size(); i++) {
            assertThat(ViewContract.Answer.class.getField(answer.get(i).toUpperCase()).getInt(null)).isEqualTo(i);
        }
        assertThat(ViewContract.Answer.SIZE).isEqualTo(answer.size());
        assertThat(Arrays.stream(ViewContract.Reason.values()).map(Enum::name)).containsExactlyElementsOf(names("reasons"));
        for (JsonNode e : contract.get("reasons")) {
            ViewContract.Reason reason = ViewContract.Reason.valueOf(e.get("name").asText());
            String family = e.hasNonNull("family") ? e.get("family").asText() : reason.name();
            assertThat(reason.family().name()).as("family of " + reason).isEqualTo(family);
            assertThat(reason.family().family()).as("a family has none of its own: " + family).isEqualTo(reason.family());
            assertThat(ViewContract.Reason.named(reason.name())).isEqualTo(reason);
        }
        assertThat(ViewContract.Reason.named("A_REASON_OF_A_LATER_LIBRARY")).isNull();
    }

    @Test
    void viewLayoutSpeaksTheContract() {
        ViewLayout layout = new ViewLayout("p:");
        assertThat(ViewLayout.LAYOUT_VERSION).isEqualTo(contract.get("layout").asInt());
        assertThat(layout.metaKey()).isEqualTo("p:{head}:meta");
        assertThat(layout.reservationsKey()).isEqualTo("p:{head}:res");
        assertThat(layout.engineReservationsKey("e1")).isEqualTo("p:{head}:res:engine:e1");
        assertThat(layout.groupKey(0xabcL)).isEqualTo("p:g:{0000000000000abc}");
        assertThat(ViewLayout.DEFAULT_CLIENT_CAP).isEqualTo(0.5);
        assertThat(ViewLayout.DEFAULT_CLIENT_MIN_INFLIGHT).isEqualTo(8);
    }

    @Test
    void theLibraryOpensWithTheContractsLuaHead() {
        String library = ViewLayout.functionLibrary();
        assertThat(library).startsWith("#!lua name=kvrouter\n");
        assertThat(library).contains("local LAYOUT = " + contract.get("layout").asInt() + "\n");
        for (JsonNode e : contract.get("reasons")) {
            assertThat(library).contains("  " + e.get("name").asText() + " = '" + e.get("name").asText() + "',\n");
        }
        for (JsonNode e : contract.get("meta")) {
            String d = e.get("default").asText();
            if (!d.equals("none")) {
                assertThat(library).contains("  " + e.get("name").asText() + " = " + d + ",\n");
            }
        }
    }

    /** The meta fields the library reads are the contract's (read_meta's HMGET: names spelled there, checked here). */
    @Test
    void theLibraryReadsOnlyMetaFieldsTheContractDeclares() {
        String library = ViewLayout.functionLibrary();
        Matcher hmget = Pattern.compile("redis\\.call\\('HMGET', meta_key,((?:\\s*'[a-z_]+',?)+)\\)").matcher(library);
        assertThat(hmget.find()).as("read_meta's HMGET of the meta key").isTrue();
        Matcher field = Pattern.compile("'([a-z_]+)'").matcher(hmget.group(1));
        List<String> read = new ArrayList<>();
        while (field.find()) {
            read.add(field.group(1));
        }
        assertThat(read).hasSizeGreaterThan(10);
        assertThat(names("meta")).containsAll(read);
        assertThat(library).contains("redis.call('HGET', meta, 'tag_depth')");
        assertThat(names("meta")).contains("tag_depth");
    }

    /** Reasons are named only in the contract: the stage files use REASON.<name>, never a string of their own. */
    @Test
    void theLibrarysStagesSpellNoReasonOfTheirOwn() {
        String library = ViewLayout.functionLibrary();
        String stages = library.substring(library.indexOf("local REVISION"));
        for (String reason : names("reasons")) {
            assertThat(stages).as(reason).doesNotContain("'" + reason + "'").doesNotContain("\"" + reason + "\"");
        }
    }

    @Test
    void anEngineEntryHasTheContractsFieldsInItsOrder() {
        EngineEntry full = new EngineEntry("READY", 1, 2, 3, 4, 5, true, 6, "BOTH", 7, 8, 9, 10);
        String[] fields = full.encode().split("\\|", -1);
        assertThat(fields).hasSize(ViewContract.EngineFields.COUNT);
        assertThat(fields[ViewContract.EngineFields.STATUS]).isEqualTo("READY");
        assertThat(fields[ViewContract.EngineFields.UNSYNCED]).isEqualTo("1");
        assertThat(fields[ViewContract.EngineFields.LOAD_MS]).isEqualTo("6");
        assertThat(fields[ViewContract.EngineFields.ROLE]).isEqualTo("BOTH");
        assertThat(fields[ViewContract.EngineFields.KV_FREE_TOKENS]).isEqualTo("10");
        assertThat(EngineEntry.decode(full.encode())).isEqualTo(full);
    }

    @Test
    void theGatewaysModuleIsTheContract() {
        String lua = ViewLayout.gatewayContractLua();
        assertThat(lua).contains("local _M = {layout = " + contract.get("layout").asInt() + "}");
        assertThat(lua).contains("  kvr_pick = 'kvr_pick',").contains("  reservations = '{head}:res',").contains("  HOLD = 'HOLD',")
                .contains("_M.answer_size = " + names("answer").size());
        List<String> answer = names("answer");
        for (int i = 0; i < answer.size(); i++) {
            assertThat(lua).contains("  " + answer.get(i) + " = " + (i + 1) + ",\n");
        }
    }

    /** redis-sink/README.md documents the view: its layout, meta fields, engine entry and answer are the contract's. */
    @Test
    void theViewsDocumentationIsTheContract() throws IOException {
        String readme = Files.readString(Path.of("..", "redis-sink", "README.md"));
        assertThat(readme).contains("`layout` (" + contract.get("layout").asInt() + ")");
        for (String meta : names("meta")) {
            assertThat(readme).as("meta field " + meta).contains("`" + meta + "`");
        }
        assertThat(readme).contains("engine key → `" + String.join("\\|", names("engine_fields").subList(0, names("engine_fields").size() - 1))
                + "[\\|" + names("engine_fields").get(names("engine_fields").size() - 1) + "]`");
        Matcher answer = Pattern.compile("→ ((?:.|\\n)*?)\\n\\n").matcher(readme.substring(readme.indexOf("FCALL kvr_pick 1")));
        assertThat(answer.find()).isTrue();
        for (int i = 1; i <= names("answer").size(); i++) {
            assertThat(answer.group(1)).as("answer field " + i).contains(i + ") ");
        }
        assertThat(answer.group(1)).doesNotContain((names("answer").size() + 1) + ") ");
        for (String reason : names("reasons")) {
            assertThat(readme).as("reason " + reason).contains(reason);
        }
    }
}
