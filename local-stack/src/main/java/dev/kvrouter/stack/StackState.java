package dev.kvrouter.stack;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Properties;

/**
 * The state file of a stack: pids, process start times and ports. Written after every step of
 * {@code up}, so a killed {@code up} still leaves enough behind for {@code down} to stop what it
 * had started.
 */
final class StackState {

    static final String FILE_NAME = "stack.properties";
    static final String ENV_FILE_NAME = "stack.env";

    private final Path dir;
    private final Properties props;

    private StackState(Path dir, Properties props) {
        this.dir = dir;
        this.props = props;
    }

    static StackState empty(Path dir) {
        return new StackState(dir, new Properties());
    }

    static Optional<StackState> read(Path dir) {
        Path file = dir.resolve(FILE_NAME);
        if (!Files.exists(file)) {
            return Optional.empty();
        }
        Properties props = new Properties();
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            props.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read stack state " + file, e);
        }
        return Optional.of(new StackState(dir, props));
    }

    void recordProcess(Service service, ProcessHandle process) {
        props.setProperty(service.key() + ".pid", Long.toString(process.pid()));
        process.info().startInstant()
                .ifPresent(t -> props.setProperty(service.key() + ".started", Long.toString(t.toEpochMilli())));
        write();
    }

    void recordPort(Service service, int port) {
        props.setProperty(service.key() + ".port", Integer.toString(port));
        write();
    }

    void recordReady(StackAddresses addresses) {
        addresses.asEnv().forEach(props::setProperty);
        props.setProperty("ready", "true");
        write();
        writeAtomically(dir.resolve(ENV_FILE_NAME), addresses.toEnvLines());
    }

    boolean ready() {
        return Boolean.parseBoolean(props.getProperty("ready", "false"));
    }

    OptionalLong pid(Service service) {
        String v = props.getProperty(service.key() + ".pid");
        return v == null ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(v));
    }

    OptionalLong startedMillis(Service service) {
        String v = props.getProperty(service.key() + ".started");
        return v == null ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(v));
    }

    OptionalInt port(Service service) {
        String v = props.getProperty(service.key() + ".port");
        return v == null ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(v));
    }

    Optional<StackAddresses> addresses() {
        if (!ready()) {
            return Optional.empty();
        }
        return Optional.of(new StackAddresses(props.getProperty(StackAddresses.KAFKA_BOOTSTRAP),
                props.getProperty(StackAddresses.SCHEMA_REGISTRY_URL), props.getProperty(StackAddresses.REDIS_URL),
                props.getProperty(StackAddresses.CLIENT_CONFIG)));
    }

    void delete() {
        try {
            Files.deleteIfExists(dir.resolve(FILE_NAME));
            Files.deleteIfExists(dir.resolve(ENV_FILE_NAME));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete stack state in " + dir, e);
        }
    }

    private void write() {
        StringBuilder text = new StringBuilder("# kv-router local stack; managed by 'kvr stack', do not edit\n");
        props.stringPropertyNames().stream().sorted()
                .forEach(k -> text.append(k).append('=').append(props.getProperty(k)).append('\n'));
        writeAtomically(dir.resolve(FILE_NAME), text.toString());
    }

    private static void writeAtomically(Path file, String content) {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            Files.createDirectories(file.getParent());
            try (Writer out = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                out.write(content);
            }
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}
