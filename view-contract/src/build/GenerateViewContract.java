import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Generates what the routing view's contract ({@code kvr-view.yaml}) is written into, so the file is the only place a
 * key, field, default, answer position or reason is written. A single-file program the JDK runs from source (the
 * build, view-contract/pom.xml and gateway/pom.xml; the scripts), so the build needs no generator plugin:
 * <pre>
 *   java GenerateViewContract.java &lt;kvr-view.yaml&gt; java &lt;generated sources dir&gt;     dev.kvrouter.contract.ViewContract
 *   java GenerateViewContract.java &lt;kvr-view.yaml&gt; library &lt;lua dir&gt; &lt;out.lua&gt;   the kvrouter library: the contract's
 *                                                   Lua head, then the dir's *.lua files in name order
 *   java GenerateViewContract.java &lt;kvr-view.yaml&gt; gateway &lt;out.lua&gt;            the nginx gateway's kvr/contract.lua
 * </pre>
 * It reads a strict subset of YAML (the file's header says which) and fails on anything else, saying where;
 * ViewContractTest parses the file as YAML and checks the generated constants against it.
 */
public final class GenerateViewContract {

    private static final Pattern TOP = Pattern.compile("^([a-z_]+):\\s*(.*)$");
    private static final Pattern ITEM = Pattern.compile("^  - name: ([A-Za-z_][A-Za-z0-9_]*)\\s*$");
    private static final Pattern FIELD = Pattern.compile("^    ([a-z_][a-z0-9_]*): (.+)$");
    private static final List<String> SECTIONS = List.of("functions", "keys", "reservation_keys", "meta", "engine_fields",
            "engine_statuses", "answer", "pick_constants", "outcomes", "reasons", "library_revisions");
    /** Where the library's stage files leave its revision, which the build fills in from the contract's register. */
    static final String REVISION_TOKEN = "@REVISION@";

    /** One entry of a section: its name and fields (description, default, key, suffix), in file order. */
    record Entry(String name, Map<String, String> fields) {
        String field(String f) {
            return fields.get(f);
        }

        String constant() {
            return name.toUpperCase(Locale.ROOT);
        }
    }

    record Contract(int layout, Map<String, List<Entry>> sections) {
        List<Entry> section(String name) {
            return sections.get(name);
        }
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 3) {
            throw new IllegalArgumentException("usage: java GenerateViewContract.java <kvr-view.yaml> java <dir> | library <lua dir> <out.lua>"
                    + " | gateway <out.lua>");
        }
        Contract c = read(Path.of(args[0]));
        switch (args[1]) {
            case "java" -> write(Path.of(args[2]).resolve("dev/kvrouter/contract/ViewContract.java"), java(c));
            case "library" -> write(Path.of(args[3]), library(c, Path.of(args[2])));
            case "gateway" -> write(Path.of(args[2]), gateway(c));
            default -> throw new IllegalArgumentException("unknown output '" + args[1] + "': java, library or gateway");
        }
    }

    static Contract read(Path yaml) throws IOException {
        List<String> lines = Files.readAllLines(yaml, StandardCharsets.UTF_8);
        Integer layout = null;
        Map<String, List<Entry>> sections = new LinkedHashMap<>();
        List<Entry> section = null;
        Entry entry = null;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            String where = yaml + ":" + (i + 1) + ": ";
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher top = TOP.matcher(line);
            Matcher item = ITEM.matcher(line);
            Matcher field = FIELD.matcher(line);
            if (top.matches()) {
                entry = null;
                if (top.group(1).equals("layout")) {
                    layout = Integer.valueOf(top.group(2).trim());
                    section = null;
                } else if (SECTIONS.contains(top.group(1)) && top.group(2).isEmpty()) {
                    section = new ArrayList<>();
                    if (sections.put(top.group(1), section) != null) {
                        throw new IllegalStateException(where + "section '" + top.group(1) + "' declared twice");
                    }
                } else {
                    throw new IllegalStateException(where + "expected 'layout: N' or one of the sections " + SECTIONS + ", got '" + line + "'");
                }
            } else if (item.matches() && section != null) {
                entry = new Entry(item.group(1), new LinkedHashMap<>());
                for (Entry other : section) {
                    if (other.name().equals(entry.name())) {
                        throw new IllegalStateException(where + "'" + entry.name() + "' declared twice");
                    }
                }
                section.add(entry);
            } else if (field.matches() && entry != null) {
                entry.fields().put(field.group(1), unquoted(field.group(2).trim()));
            } else {
                throw new IllegalStateException(where + "not a line of the contract's YAML subset (see the file's header): '" + line + "'");
            }
        }
        if (layout == null) {
            throw new IllegalStateException(yaml + ": no 'layout: N'");
        }
        for (String s : SECTIONS) {
            if (!sections.containsKey(s) || sections.get(s).isEmpty()) {
                throw new IllegalStateException(yaml + ": section '" + s + "' is missing or empty");
            }
            for (Entry e : sections.get(s)) {
                if (e.field("description") == null) {
                    throw new IllegalStateException(yaml + ": " + s + " '" + e.name() + "' has no description");
                }
            }
        }
        for (Entry e : sections.get("reasons")) {
            String family = e.field("family");
            Entry parent = family == null ? null : sections.get("reasons").stream().filter(r -> r.name().equals(family)).findFirst().orElse(null);
            if (family != null && (parent == null || parent.field("family") != null)) {
                throw new IllegalStateException(yaml + ": reason '" + e.name() + "' has family '" + family
                        + "', which is not a reason without a family of its own");
            }
        }
        return new Contract(layout, sections);
    }

    private static String unquoted(String v) {
        return v.length() >= 2 && v.startsWith("'") && v.endsWith("'") ? v.substring(1, v.length() - 1) : v;
    }

    /** A default as written, or null for "none". */
    private static String defaultOf(Entry e) {
        String d = e.field("default");
        return d == null || d.equals("none") ? null : d;
    }

    /** A yes/no field, refused when it is anything else. */
    private static boolean yes(Entry e, String field) {
        String v = e.field(field);
        if (!"yes".equals(v) && !"no".equals(v)) {
            throw new IllegalStateException(e.name() + ": '" + field + "' must be yes or no, got " + v);
        }
        return v.equals("yes");
    }

    private static boolean numeric(String v) {
        return v.matches("-?[0-9]+(\\.[0-9]+)?");
    }

    private static String javaString(String s) {
        return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }

    private static String luaString(String s) {
        return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }

    private static String comment(String indent, String text) {
        return indent + "/** " + text.replace("*/", "* /").replace("<", "&lt;").replace(">", "&gt;") + " */\n";
    }

    static String java(Contract c) {
        StringBuilder j = new StringBuilder();
        j.append("package dev.kvrouter.contract;\n\n");
        j.append("/**\n * The routing view's contract, generated from kvr-view.yaml (view-contract/src/main/resources), the one place\n");
        j.append(" * each key, field, default, answer position and reason is written: edit the YAML, not this class.\n */\n");
        j.append("public final class ViewContract {\n\n    private ViewContract() {}\n\n");
        j.append(comment("    ", "Bumped on any incompatible change of keys or values."));
        j.append("    public static final int LAYOUT = ").append(c.layout()).append(";\n\n");
        j.append("    /** The library's functions. */\n    public static final class Functions {\n        private Functions() {}\n\n");
        for (Entry e : c.section("functions")) {
            j.append(comment("        ", e.field("description")));
            j.append("        public static final String ").append(e.constant()).append(" = ").append(javaString(e.name())).append(";\n");
        }
        j.append("    }\n\n    /** The view's keys, each under the key prefix. */\n    public static final class Keys {\n        private Keys() {}\n\n");
        for (Entry e : c.section("keys")) {
            j.append(comment("        ", e.field("description")));
            j.append("        public static final String ").append(e.constant()).append(" = ").append(javaString(e.field("key"))).append(";\n");
        }
        j.append("    }\n\n    /** The keys under the reservations key: its name followed by these. */\n");
        j.append("    public static final class ReservationKeys {\n        private ReservationKeys() {}\n\n");
        for (Entry e : c.section("reservation_keys")) {
            j.append(comment("        ", e.field("description")));
            j.append("        public static final String ").append(e.constant()).append(" = ").append(javaString(e.field("suffix"))).append(";\n");
        }
        j.append("    }\n\n    /** The meta hash's fields; DEFAULT_&lt;FIELD&gt;: what a pick takes when it is absent. */\n");
        j.append("    public static final class Meta {\n        private Meta() {}\n\n");
        for (Entry e : c.section("meta")) {
            j.append(comment("        ", e.field("description")));
            j.append("        public static final String ").append(e.constant()).append(" = ").append(javaString(e.name())).append(";\n");
            String d = defaultOf(e);
            if (d != null) {
                String type = d.contains(".") ? "double" : "int";
                j.append("        public static final ").append(type).append(" DEFAULT_").append(e.constant()).append(" = ").append(d).append(";\n");
            }
        }
        j.append("    }\n\n    /** An engine entry's fields: their 0-based positions in the '|'-joined value. */\n");
        j.append("    public static final class EngineFields {\n        private EngineFields() {}\n\n");
        appendPositions(j, c.section("engine_fields"));
        j.append("        /** How many fields an entry has at most. */\n        public static final int COUNT = ")
                .append(c.section("engine_fields").size()).append(";\n");
        j.append("    }\n\n    /** An engine entry's status. A status not listed takes requests. */\n    public enum EngineStatus {\n");
        List<Entry> statuses = c.section("engine_statuses");
        for (int i = 0; i < statuses.size(); i++) {
            Entry e = statuses.get(i);
            j.append(comment("        ", e.field("description")));
            j.append("        ").append(e.name()).append('(').append(yes(e, "takes_requests")).append(", ").append(yes(e, "gone")).append(')')
                    .append(i + 1 < statuses.size() ? ",\n" : ";\n\n");
        }
        j.append("        private final boolean takesRequests;\n        private final boolean gone;\n\n");
        j.append("        EngineStatus(boolean takesRequests, boolean gone) {\n            this.takesRequests = takesRequests;\n");
        j.append("            this.gone = gone;\n        }\n\n");
        j.append("        /** Whether a pick may send the engine new requests. */\n");
        j.append("        public boolean takesRequests() {\n            return takesRequests;\n        }\n\n");
        j.append("        /** Whether the entry stands for an engine that is gone (its holder entries are void). */\n");
        j.append("        public boolean gone() {\n            return gone;\n        }\n\n");
        j.append("        /** Whether an entry of this status takes requests (a status not listed does). */\n");
        j.append("        public static boolean takesRequests(String status) {\n");
        j.append("            for (EngineStatus s : values()) {\n                if (s.name().equals(status)) {\n");
        j.append("                    return s.takesRequests;\n                }\n            }\n            return true;\n        }\n\n");
        j.append("        /** Whether an entry of this status stands for an engine that is gone. */\n");
        j.append("        public static boolean gone(String status) {\n");
        j.append("            for (EngineStatus s : values()) {\n                if (s.name().equals(status)) {\n");
        j.append("                    return s.gone;\n                }\n            }\n            return false;\n        }\n");
        j.append("    }\n\n    /** The placement functions' answer: 0-based positions. */\n");
        j.append("    public static final class Answer {\n        private Answer() {}\n\n");
        appendPositions(j, c.section("answer"));
        j.append("        /** How many values an answer has. */\n        public static final int SIZE = ").append(c.section("answer").size())
                .append(";\n");
        j.append("    }\n\n    /** Figures of the pick another side models too. */\n");
        j.append("    public static final class PickConstants {\n        private PickConstants() {}\n\n");
        for (Entry e : c.section("pick_constants")) {
            j.append(comment("        ", e.field("description")));
            j.append("        public static final double ").append(e.constant()).append(" = ").append(e.field("value")).append(";\n");
        }
        j.append("    }\n\n    /** What a placement is expected to save. */\n    public enum Outcome {\n");
        appendEnum(j, c.section("outcomes"));
        j.append("    }\n\n    /** Why a placement went where it did. */\n    public enum Reason {\n");
        List<Entry> reasons = c.section("reasons");
        for (int i = 0; i < reasons.size(); i++) {
            Entry e = reasons.get(i);
            j.append(comment("        ", e.field("description")));
            j.append("        ").append(e.name()).append('(').append(e.field("family") == null ? "null" : '"' + e.field("family") + '"').append(')')
                    .append(i + 1 < reasons.size() ? ",\n" : ";\n\n");
        }
        j.append("        private final String family;\n\n");
        j.append("        Reason(String family) {\n            this.family = family;\n        }\n\n");
        j.append("        /** The reason decisions and dashboards carry for this one: the older, coarser reason it refines, or itself. */\n");
        j.append("        public Reason family() {\n            return family == null ? this : valueOf(family);\n        }\n\n");
        j.append("        /** The reason of this name, or null for a name this contract does not know (a later library's). */\n");
        j.append("        public static Reason named(String name) {\n");
        j.append("            for (Reason r : values()) {\n                if (r.name().equals(name)) {\n");
        j.append("                    return r;\n                }\n            }\n            return null;\n        }\n");
        j.append("    }\n}\n");
        return j.toString();
    }

    /** One int constant an entry: its 0-based position. */
    private static void appendPositions(StringBuilder j, List<Entry> entries) {
        for (int i = 0; i < entries.size(); i++) {
            j.append(comment("        ", entries.get(i).field("description")));
            j.append("        public static final int ").append(entries.get(i).constant()).append(" = ").append(i).append(";\n");
        }
    }

    private static void appendEnum(StringBuilder j, List<Entry> entries) {
        for (int i = 0; i < entries.size(); i++) {
            j.append(comment("        ", entries.get(i).field("description")));
            j.append("        ").append(entries.get(i).name()).append(i + 1 < entries.size() ? ",\n" : ";\n");
        }
    }

    /** The contract as Lua locals, the head of the kvrouter library. */
    static String luaHead(Contract c) {
        StringBuilder l = new StringBuilder();
        l.append("-- The view's contract, generated from kvr-view.yaml (view-contract/src/main/resources): edit the YAML.\n");
        l.append("local LAYOUT = ").append(c.layout()).append("\n");
        // Plain tables: FUNCTION LOAD runs the library's top level without setmetatable (a typo reads as nil, which the
        // library's tests and scripts/pick-diff.sh catch).
        appendLuaTable(l, "KEY", "key", c.section("keys"), e -> luaString(e.field("key")));
        appendLuaTable(l, "RES_KEY", "reservation key", c.section("reservation_keys"), e -> luaString(e.field("suffix")));
        appendLuaTable(l, "META_DEFAULT", "meta default", c.section("meta").stream().filter(e -> defaultOf(e) != null).toList(),
                e -> numeric(defaultOf(e)) ? defaultOf(e) : luaString(defaultOf(e)));
        appendLuaTable(l, "ANSWER", "answer field", c.section("answer"), e -> Integer.toString(c.section("answer").indexOf(e) + 1));
        l.append("local ANSWER_SIZE = ").append(c.section("answer").size()).append("\n");
        appendLuaTable(l, "PICK", "pick constant", c.section("pick_constants"), e -> e.field("value"));
        appendLuaTable(l, "OUTCOME", "outcome", c.section("outcomes"), e -> luaString(e.name()));
        appendLuaTable(l, "REASON", "reason", c.section("reasons"), e -> luaString(e.name()));
        l.append("local ENGINE_FIELD_COUNT = ").append(c.section("engine_fields").size()).append("\n");
        appendLuaTable(l, "ENGINE_STATUS", "engine status", c.section("engine_statuses"),
                e -> "{takes_requests = " + yes(e, "takes_requests") + ", gone = " + yes(e, "gone") + "}");
        return l.toString();
    }

    private static void appendLuaTable(StringBuilder l, String name, String what, List<Entry> entries,
                                       java.util.function.Function<Entry, String> value) {
        l.append("local ").append(name).append(" = { -- ").append(what).append("s\n");
        for (Entry e : entries) {
            l.append("  ").append(e.name()).append(" = ").append(value.apply(e)).append(",\n");
        }
        l.append("}\n");
    }

    static String library(Contract c, Path luaDir) throws IOException {
        StringBuilder lib = new StringBuilder("#!lua name=kvrouter\n\n");
        lib.append(luaHead(c)).append('\n');
        List<Path> files;
        try (Stream<Path> s = Files.list(luaDir)) {
            files = s.filter(p -> p.getFileName().toString().endsWith(".lua")).sorted().toList();
        }
        if (files.isEmpty()) {
            throw new IllegalStateException(luaDir + " holds no .lua file");
        }
        for (Path f : files) {
            lib.append(Files.readString(f, StandardCharsets.UTF_8));
        }
        String joined = lib.toString();
        int token = joined.indexOf(REVISION_TOKEN);
        if (token < 0 || joined.indexOf(REVISION_TOKEN, token + 1) >= 0) {
            throw new IllegalStateException(luaDir + ": the library must say " + REVISION_TOKEN + " exactly once (local REVISION = "
                    + REVISION_TOKEN + ")");
        }
        return withRevision(joined, c.section("library_revisions"));
    }

    /**
     * The library with its revision: the registered one whose sha256 the library has with that revision written in,
     * else the next one (LibraryRevisionTest then fails, naming the hash to register).
     */
    static String withRevision(String joined, List<Entry> register) {
        int next = 1;
        for (Entry r : register) {
            if (!r.name().matches("r[1-9][0-9]*") || r.field("sha256") == null || !r.field("sha256").matches("[0-9a-f]{64}")) {
                throw new IllegalStateException("library_revisions: '" + r.name() + "' must be rN with a sha256 of 64 hex digits");
            }
            int revision = Integer.parseInt(r.name().substring(1));
            if (revision != next) {
                throw new IllegalStateException("library_revisions: expected r" + next + ", got " + r.name() + " (one each, in order)");
            }
            next++;
            String library = joined.replace(REVISION_TOKEN, Integer.toString(revision));
            if (sha256(library).equals(r.field("sha256"))) {
                return library;
            }
        }
        return joined.replace(REVISION_TOKEN, Integer.toString(next));
    }

    static String sha256(String text) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static String gateway(Contract c) {
        StringBuilder l = new StringBuilder();
        l.append("-- The routing view's contract for the gateway, generated from kvr-view.yaml (view-contract/src/main/resources):\n");
        l.append("-- edit the YAML. The function names, keys, answer positions (1-based) and reasons the gateway uses.\n");
        l.append("local _M = {layout = ").append(c.layout()).append("}\n");
        for (String[] t : new String[][] {{"functions", "functions"}, {"keys", "keys"}, {"answer", "answer"}, {"reasons", "reasons"}}) {
            l.append("_M.").append(t[0]).append(" = {\n");
            List<Entry> entries = c.section(t[1]);
            for (int i = 0; i < entries.size(); i++) {
                Entry e = entries.get(i);
                String v = switch (t[0]) {
                    case "keys" -> luaString(e.field("key"));
                    case "answer" -> Integer.toString(i + 1);
                    default -> luaString(e.name());
                };
                l.append("  ").append(e.name()).append(" = ").append(v).append(",\n");
            }
            l.append("}\n");
        }
        l.append("_M.answer_size = ").append(c.section("answer").size()).append("\n");
        l.append("return _M\n");
        return l.toString();
    }

    private static void write(Path out, String text) throws IOException {
        Files.createDirectories(out.getParent());
        // Unchanged output is left alone, so the compiler and resources plugin see nothing new.
        if (Files.exists(out) && Files.readString(out, StandardCharsets.UTF_8).equals(text)) {
            return;
        }
        Files.writeString(out, text, StandardCharsets.UTF_8);
    }
}
