package dev.kvrouter.jobs.view;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.stack.Ports;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shaded job jar on a real standalone Flink 2.2 session cluster (JobManager and TaskManager
 * processes from Maven Central jars, {@code scripts/flink-session/pom.xml}), submitted with the
 * README's {@code flink run} command (addresses, prefixes, checkpoint directory and interval
 * replaced): it runs; its TaskManager is killed with SIGKILL and a new one takes over from the last
 * checkpoint; the job is stopped with a savepoint ({@code flink stop --savepointPath}) and submitted
 * again from it ({@code flink run -s}). After each step the view holds every entry a clean run holds.
 */
@ExtendWith(LocalStackExtension.class)
class StandaloneClusterITCase {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final int BLOCKS_PER_PROMPT = 8;
    /** What Flink's scripts pass to every JVM on Java 17. */
    private static final List<String> OPENS = List.of("--add-exports=java.base/sun.net.util=ALL-UNNAMED",
            "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED", "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
            "--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.net=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
            "--add-opens=java.base/java.text=ALL-UNNAMED", "--add-opens=java.base/java.time=ALL-UNNAMED",
            "--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED");

    @TempDir
    Path dir;

    private final List<Process> processes = new ArrayList<>();
    private String classpath;
    private String rest;

    @Test
    void theReadmeCommandSurvivesATaskManagerKillAndASavepointRoundTrip(StackAddresses stack) throws Exception {
        Path jar = Files.list(Path.of("target")).filter(p -> p.getFileName().toString().endsWith("-job.jar")).findFirst()
                .orElseThrow(() -> new IllegalStateException("no shaded job jar in flink-jobs/target: run 'mvn package' first"));
        classpath = sessionClasspath();
        String topics = ViewTestSupport.topics(stack, "it-standalone");
        String keyPrefix = UniqueNames.redisPrefix("it-standalone");
        Map<String, String> replaced = Map.of("kafka.bootstrap", stack.kafkaBootstrap(), "schema-registry.url", stack.schemaRegistryUrl(),
                "redis.url", stack.redisUrl(), "topics.prefix", topics, "view.key-prefix", keyPrefix,
                "kafka.group-id", UniqueNames.topic("it-standalone-job"), "kafka.starting-offsets", "earliest",
                "job.checkpoint-interval", "2 s", "job.checkpoint-dir", dir.resolve("checkpoints").toUri().toString(),
                "job.parallelism", "2");
        List<String> submit = new ArrayList<>(ReadmeFlinkRun.arguments(replaced));
        submit.replaceAll(a -> a.endsWith("-job.jar") ? jar.toAbsolutePath().toString() : a);
        submit.set(submit.indexOf("--parallelism") + 1, "2");
        KvRouterJobConfig config = ViewTestSupport.config(stack, topics, stack.redisUrl(), "view.key-prefix", keyPrefix);
        ViewLayout layout = new ViewLayout(keyPrefix);
        FakeEngine engine = new FakeEngine(UniqueNames.topic("engine"), 16);
        Random random = new Random(31);
        List<int[]> prompts = new ArrayList<>();
        RedisClient redisClient = RedisClient.create(stack.redisUrl());
        ScheduledExecutorService heartbeats = Executors.newSingleThreadScheduledExecutor();
        try (KafkaProducer<String, Object> producer = ViewTestSupport.producer(stack);
             StatefulRedisConnection<String, String> connection = redisClient.connect()) {
            RedisCommands<String, String> redis = connection.sync();
            startCluster();
            heartbeats.scheduleAtFixedRate(() -> producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.ENGINE_LOAD), engine.id,
                    engine.load(0, 1))), 0, 500, TimeUnit.MILLISECONDS);

            String job = jobId(flink(submit));
            awaitTrue(() -> allTasksRunning(job), "every task of job " + job + " running");
            store(producer, config, engine, prompts, random);
            awaitView(redis, layout, engine, prompts, config);
            long completed = checkpoints(job).path("counts").path("completed").asLong();
            awaitTrue(() -> checkpoints(job).path("counts").path("completed").asLong() >= completed + 2, "two more checkpoints");

            // SIGKILL, as kill -9: no shutdown hook, no goodbye to the JobManager.
            Process taskManager = processes.get(1);
            taskManager.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            startTaskManager();
            store(producer, config, engine, prompts, random);
            awaitTrue(() -> allTasksRunning(job) && checkpoints(job).path("latest").path("restored").has("id"),
                    "the job running again from a restored checkpoint");
            awaitView(redis, layout, engine, prompts, config);

            String savepoint = savepointPath(flink(List.of("stop", "--savepointPath", dir.resolve("savepoints").toUri().toString(), job)));
            store(producer, config, engine, prompts, random); // while the job is stopped
            List<String> fromSavepoint = new ArrayList<>(submit);
            fromSavepoint.addAll(2, List.of("--fromSavepoint", savepoint));
            String second = jobId(flink(fromSavepoint));
            awaitTrue(() -> allTasksRunning(second), "every task of the restored job running");
            assertThat(checkpoints(second).path("latest").path("restored").path("external_path").asText())
                    .as("restored from the savepoint").isEqualTo(savepoint);
            awaitView(redis, layout, engine, prompts, config);
            flink(List.of("cancel", second));
        } finally {
            heartbeats.shutdownNow();
            redisClient.shutdown();
            stopCluster();
        }
    }

    /** A new prompt's blocks, stored on the engine. */
    private static void store(KafkaProducer<String, Object> producer, KvRouterJobConfig config, FakeEngine engine, List<int[]> prompts,
                              Random random) throws Exception {
        List<Object> events = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            int[] prompt = random.ints(BLOCKS_PER_PROMPT * 16, 0, 50_000).toArray();
            prompts.add(prompt);
            events.add(engine.stored(prompt, 0, BLOCKS_PER_PROMPT));
        }
        producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), engine.id, engine.batch(events.toArray()))).get();
    }

    private static void awaitView(RedisCommands<String, String> redis, ViewLayout layout, FakeEngine engine, List<int[]> prompts,
                                  KvRouterJobConfig config) throws InterruptedException {
        Set<String> clean = ViewTestSupport.entriesOf(layout, engine.id, prompts, config.view().tagDepth());
        awaitTrue(() -> ViewTestSupport.entries(ViewTestSupport.blockFields(redis, layout)).equals(clean),
                clean.size() + " entries, as a clean run has them");
    }

    /** The session cluster's classpath: Flink's own jars from Maven Central, none of the job's. */
    private String sessionClasspath() throws Exception {
        Path out = dir.resolve("classpath.txt");
        Process mvn = new ProcessBuilder("mvn", "-B", "-q", "dependency:build-classpath", "-f",
                Path.of("..", "scripts", "flink-session", "pom.xml").toString(), "-Dmdep.outputFile=" + out)
                .redirectErrorStream(true).redirectOutput(dir.resolve("mvn.log").toFile()).start();
        assertThat(mvn.waitFor(10, TimeUnit.MINUTES) && mvn.exitValue() == 0)
                .as("the session classpath resolves; see %s", dir.resolve("mvn.log")).isTrue();
        return Files.readString(out).trim();
    }

    private void startCluster() throws Exception {
        int rpcPort = Ports.free();
        int restPort = Ports.free();
        rest = "http://127.0.0.1:" + restPort;
        Path conf = Files.createDirectories(dir.resolve("conf"));
        Files.writeString(conf.resolve("config.yaml"), String.join("\n",
                "jobmanager.rpc.address: localhost", "jobmanager.rpc.port: " + rpcPort, "jobmanager.bind-host: localhost",
                "taskmanager.bind-host: localhost", "taskmanager.host: localhost", "rest.address: localhost",
                "rest.bind-address: localhost", "rest.port: " + restPort, "jobmanager.memory.process.size: 1024m",
                "taskmanager.memory.process.size: 1536m", "taskmanager.numberOfTaskSlots: 2",
                "heartbeat.interval: 2000", "heartbeat.timeout: 10000", "env.java.opts.all: " + String.join(" ", OPENS), ""));
        Files.writeString(conf.resolve("log4j.properties"), String.join("\n", "rootLogger.level = INFO",
                "rootLogger.appenderRef.file.ref = file", "appender.file.type = File", "appender.file.name = file",
                "appender.file.fileName = ${sys:log.file}", "appender.file.layout.type = PatternLayout",
                "appender.file.layout.pattern = %d{HH:mm:ss,SSS} %-5p %c{1} - %m%n", ""));
        start("jobmanager", "GET_JM_RESOURCE_PARAMS", "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint");
        startTaskManager();
    }

    private void startTaskManager() throws Exception {
        start("taskmanager-" + processes.size(), "GET_TM_RESOURCE_PARAMS", "org.apache.flink.runtime.taskexecutor.TaskManagerRunner");
        awaitTrue(() -> get("/taskmanagers").path("taskmanagers").size() >= 1
                && get("/overview").path("slots-available").asInt() + get("/overview").path("slots-total").asInt() > 0,
                "a TaskManager registered");
    }

    /** One cluster process, with the memory flags Flink's own scripts compute. */
    private void start(String name, String resourceParams, String mainClass) throws Exception {
        Path conf = dir.resolve("conf");
        List<String> params = new ArrayList<>();
        Process utils = new ProcessBuilder(java(), "-cp", classpath, "org.apache.flink.runtime.util.bash.BashJavaUtils", resourceParams,
                "--configDir", conf.toString()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        for (String line : new String(utils.getInputStream().readAllBytes()).split("\n")) {
            if (line.startsWith("BASH_JAVA_UTILS_EXEC_RESULT:")) {
                params.add(line.substring("BASH_JAVA_UTILS_EXEC_RESULT:".length()).trim());
            }
        }
        assertThat(utils.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(params).as("memory flags for the %s", name).hasSize(2);
        List<String> command = new ArrayList<>(List.of(java()));
        command.addAll(List.of(params.get(0).split(" ")));
        command.addAll(OPENS);
        command.addAll(List.of("-Dlog4j.configurationFile=file:" + conf.resolve("log4j.properties"),
                "-Dlog.file=" + dir.resolve(name + ".log"), "-cp", classpath, mainClass, "--configDir", conf.toString()));
        command.addAll(List.of(params.get(1).split(" ")));
        processes.add(new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve(name + ".out").toFile()).start());
    }

    /** The Flink CLI ({@code flink …}) against the session cluster; its output, after it exited 0. */
    private String flink(List<String> args) throws Exception {
        List<String> command = new ArrayList<>(List.of(java()));
        command.addAll(OPENS);
        command.addAll(List.of("-Dlog4j.configurationFile=file:" + dir.resolve("conf").resolve("log4j.properties"),
                "-Dlog.file=" + dir.resolve("cli.log"), "-cp", classpath, "org.apache.flink.client.cli.CliFrontend"));
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("FLINK_CONF_DIR", dir.resolve("conf").toString());
        Process cli = builder.start();
        String output = new String(cli.getInputStream().readAllBytes());
        assertThat(cli.waitFor(5, TimeUnit.MINUTES) && cli.exitValue() == 0).as("flink %s:%n%s", args.get(0), output).isTrue();
        return output;
    }

    private static String jobId(String submitted) {
        Matcher m = Pattern.compile("JobID ([0-9a-f]{32})").matcher(submitted);
        assertThat(m.find()).as("a job id in:%n%s", submitted).isTrue();
        return m.group(1);
    }

    private static String savepointPath(String stopped) {
        Matcher m = Pattern.compile("Savepoint completed\\. Path: (\\S+)").matcher(stopped);
        assertThat(m.find()).as("a savepoint path in:%n%s", stopped).isTrue();
        return m.group(1);
    }

    private boolean allTasksRunning(String job) {
        JsonNode vertices = get("/jobs/" + job).path("vertices");
        if (vertices.isEmpty()) {
            return false;
        }
        for (JsonNode v : vertices) {
            if (v.path("tasks").path("RUNNING").asInt() != v.path("parallelism").asInt()) {
                return false;
            }
        }
        return true;
    }

    private JsonNode checkpoints(String job) {
        return get("/jobs/" + job + "/checkpoints");
    }

    /** A REST resource of the cluster; an empty node while it does not answer. */
    private JsonNode get(String path) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(rest + path)).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? JSON.readTree(r.body()) : JSON.createObjectNode();
        } catch (IOException e) {
            return JSON.createObjectNode();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return JSON.createObjectNode();
        }
    }

    /** Stops every process this test started, by its handle: SIGTERM, then SIGKILL after 10 s. */
    private void stopCluster() throws InterruptedException {
        for (Process p : processes) {
            p.destroy();
        }
        for (Process p : processes) {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static void awaitTrue(BooleanSupplier condition, String what) throws InterruptedException {
        ViewTestSupport.awaitTrue(condition, what, Duration.ofMinutes(3));
    }
}
