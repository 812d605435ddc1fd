package dev.kvrouter.schemas;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.avro.Schema;

/** Reads a folder of .avsc files, one named type per file, that refer to each other by name. */
final class AvscFiles {

    private AvscFiles() {}

    /**
     * Full name to schema, for every file under {@code root}. Files refer to each other's types by
     * full name; each is parsed after the files whose types it names (Avro 1.12's own forward
     * references fail on enum defaults).
     */
    static Map<String, Schema> parse(Path root) {
        Map<String, Path> fileOfType = new LinkedHashMap<>();
        Map<Path, String> text = new LinkedHashMap<>();
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path file : walk.filter(p -> p.toString().endsWith(".avsc")).sorted().toList()) {
                text.put(file, Files.readString(file));
                String relative = root.relativize(file).toString();
                fileOfType.put(relative.substring(0, relative.length() - ".avsc".length()).replace('/', '.'), file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, Schema> known = new LinkedHashMap<>();
        Map<Path, Schema> byFile = new LinkedHashMap<>();
        for (Path file : text.keySet()) {
            parseWithDependencies(file, text, fileOfType, known, byFile, new java.util.HashSet<>());
        }
        FILES.put(root, byFile);
        return known;
    }

    private static void parseWithDependencies(Path file, Map<Path, String> text, Map<String, Path> fileOfType,
                                              Map<String, Schema> known, Map<Path, Schema> byFile, java.util.Set<Path> visiting) {
        if (byFile.containsKey(file)) {
            return;
        }
        if (!visiting.add(file)) {
            throw new IllegalStateException("cyclic references between schema files at " + file);
        }
        fileOfType.forEach((type, other) -> {
            if (!other.equals(file) && text.get(file).contains("\"" + type + "\"")) {
                parseWithDependencies(other, text, fileOfType, known, byFile, visiting);
            }
        });
        Schema schema = new Schema.Parser().addTypes(known.values()).parse(text.get(file));
        known.put(schema.getFullName(), schema);
        byFile.put(file, schema);
    }

    /** The file each schema of {@code root} came from (after {@link #parse}). */
    static Map<Path, Schema> files(Path root) {
        if (!FILES.containsKey(root)) {
            parse(root);
        }
        return FILES.get(root);
    }

    private static final Map<Path, Map<Path, Schema>> FILES = new java.util.concurrent.ConcurrentHashMap<>();

    static Path current() {
        return Path.of("src/main/avro");
    }

    static Path released() {
        return Path.of("released");
    }

    /** Released versions, oldest first: released/v1, released/v2, ... */
    static List<Path> releasedVersions() {
        try (Stream<Path> dirs = Files.list(released())) {
            return dirs.filter(Files::isDirectory).filter(d -> d.getFileName().toString().matches("v\\d+"))
                    .sorted((a, b) -> Integer.compare(version(a), version(b))).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static int version(Path dir) {
        return Integer.parseInt(dir.getFileName().toString().substring(1));
    }
}
