package dev.kvrouter.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.bridge.Bridge;
import dev.kvrouter.bridge.BridgeBench;
import dev.kvrouter.bridge.BridgeConfig;
import dev.kvrouter.bridge.VllmEventEncoder;
import dev.kvrouter.common.config.ClientConfig;
import dev.kvrouter.contract.RedisRefusedException;
import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.contract.ViewConnection;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.jobs.view.KvRouterJob;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.registry.SchemaRegistryClient;
import dev.kvrouter.schemas.registry.SchemaRegistryException;
import dev.kvrouter.stack.LocalStack;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.topics.KafkaClients;
import dev.kvrouter.topics.TopicApplier;
import dev.kvrouter.topics.TopicCatalog;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The secure stack ({@code kvr stack up --secure}): Kafka on SASL_SSL with SCRAM users, Redis on TLS
 * with an ACL user, the registry behind TLS and basic auth. The whole path works with the client config, each service refuses a client
 * without it or with a wrong password with a message saying which service and what to set, and no
 * secret shows in anything the test produced.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SecureStackITCase {

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String ENGINE = "it-secure";
    private static final String MODEL = "it-model";
    private static final String METRICS = """
            # TYPE vllm:num_requests_running gauge
            vllm:num_requests_running{model_name="it-model"} 1.0
            # TYPE vllm:num_requests_waiting gauge
            vllm:num_requests_waiting{model_name="it-model"} 0.0
            # TYPE vllm:gpu_cache_usage_perc gauge
            vllm:gpu_cache_usage_perc{model_name="it-model"} 0.25
            """;

    /** Shared by the tests: one secure stack for the class (its start makes certificates and users). */
    @TempDir
    static Path dir;
    private LocalStack stack;
    private StackAddresses addresses;
    private ClientConfig client;
    /** Everything the test printed or was told: searched for secrets at the end. */
    private final ByteArrayOutputStream said = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(said, true, StandardCharsets.UTF_8);

    @BeforeAll
    void startSecureStack() {
        stack = new LocalStack(LocalStack.Options.defaults(dir.resolve("stack")).withSecurity(true).withOut(out));
        addresses = stack.up();
        client = addresses.client();
        out.println(addresses + " " + client);
    }

    @AfterAll
    void stopStack() {
        if (stack != null) {
            stack.down();
        }
    }

    /**
     * The whole path with least privilege: the bridge, the job and a balancer each as its own role's
     * user on Kafka (the ACLs `topics apply --acl` grants) and on Redis (the shipped Redis users: the
     * job writes the view and loads the functions, the balancer places and releases, a reader peeks).
     */
    @Test
    void bridgeToKafkaToJobToRedisToPickWorksWithEachRolesOwnUsers() throws Exception {
        assertThat(addresses.redisUrl()).startsWith("rediss://");
        assertThat(addresses.clientConfig()).isNotEmpty();
        String prefix = "it-secure-" + System.nanoTime() + ".";
        applyTopicsAndGrantRoles(prefix);
        Path secure = Path.of(addresses.clientConfig()).getParent();

        Map<String, String> job = new LinkedHashMap<>();
        job.put("kafka.bootstrap", addresses.kafkaBootstrap());
        job.put("schema-registry.url", addresses.schemaRegistryUrl());
        job.put("redis.url", addresses.redisUrl());
        job.put("client-config", secure.resolve("client-job.properties").toString());
        job.put("topics.prefix", prefix);
        job.put("kafka.group-id", prefix + "job");
        job.put("kafka.starting-offsets", "earliest");
        job.put("view.key-prefix", prefix);
        job.put("job.checkpoint-dir", dir.resolve("checkpoints").toUri().toString());
        KvRouterJobConfig config = KvRouterJobConfig.from(job);
        out.println(config);
        StreamExecutionEnvironment env = KvRouterJob.environment(config, null, new org.apache.flink.configuration.Configuration());
        KvRouterJob.wire(env, config);
        JobClient running = env.executeAsync("kv-router secure it");

        HttpServer metrics = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        metrics.createContext("/metrics", exchange -> {
            byte[] body = METRICS.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        metrics.start();
        try (ZContext zmq = new ZContext()) {
            ZMQ.Socket pub = zmq.createSocket(SocketType.XPUB);
            int port = pub.bindToRandomPort("tcp://127.0.0.1");
            Path engines = dir.resolve("engines.yaml");
            Files.writeString(engines, """
                    engines:
                      - id: %s
                        model: %s
                        events: tcp://127.0.0.1:%d
                        metrics: http://127.0.0.1:%d/metrics
                    """.formatted(ENGINE, MODEL, port, metrics.getAddress().getPort()));
            BridgeConfig bridgeConfig = BridgeConfig.from(Map.of("kafka.bootstrap", addresses.kafkaBootstrap(),
                    "schema-registry.url", addresses.schemaRegistryUrl(), "topics.prefix", prefix, "engines.file", engines.toString(),
                    "client-config", secure.resolve("client-bridge.properties").toString(), "report.interval", "1 h"));
            out.println(bridgeConfig);
            Bridge.checkTopics(bridgeConfig, Duration.ofSeconds(30));
            int[] tokens = new java.util.Random(7).ints(64, 1, 30_000).toArray();
            List<Long> hashes = VllmEventEncoder.hashes(11, 4);
            try (Bridge bridge = Bridge.start(bridgeConfig, out::println);
                 KvRouterClient router = new KvRouterClient(KvRouterClient.Options.defaults(addresses.redisUrl()).withKeyPrefix(prefix)
                         .withSecurity(roleRedis(secure, "balancer")));
                 KvRouterClient reader = new KvRouterClient(KvRouterClient.Options.defaults(addresses.redisUrl()).withKeyPrefix(prefix)
                         .withSecurity(roleRedis(secure, "reader")).observing())) {
                BridgeBench.awaitSubscription(pub, Duration.ofSeconds(30));
                byte[] payload = VllmEventEncoder.batch(System.currentTimeMillis() / 1000.0, List.of(
                        VllmEventEncoder.blockStored(hashes, null, tokens, 16, null, "GPU", null, null, 0, null, null)),
                        0, VllmEventEncoder.Encoding.MAP, false);
                List<byte[]> frames = VllmEventEncoder.frames("", 0, payload);
                pub.sendMore(frames.get(0));
                pub.sendMore(frames.get(1));
                pub.send(frames.get(2));

                KvRouterClient.Pick pick = null;
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (System.nanoTime() < deadline) {
                    pick = reader.pick(MODEL, null, tokens, List.of());
                    if (ENGINE.equals(pick.engineId()) && pick.matchedBlocks() == 4) {
                        break;
                    }
                    Thread.sleep(250);
                }
                out.println(pick);
                assertThat(pick).isNotNull();
                assertThat(pick.engineId()).isEqualTo(ENGINE);
                assertThat(pick.matchedBlocks()).as("the engine's 4 blocks, through the bridge, Kafka, the job and Redis").isEqualTo(4);
                KvRouterClient.Pick placed = router.pick(MODEL, null, tokens, List.of()); // reserves, under a new request id
                assertThat(placed.source()).as("the balancer's user places: %s", placed).isEqualTo(KvRouterClient.Source.VIEW);
                assertThat(placed.engineId()).isEqualTo(ENGINE);
                assertThat(router.done(placed.requestId())).as("and releases").isTrue();
            }
        } finally {
            metrics.stop(0);
            running.cancel().get(60, TimeUnit.SECONDS);
        }
        assertNoSecretIn();
    }

    /**
     * Least privilege on Kafka: the secure broker authorizes every client (StandardAuthorizer), and
     * `topics apply --acl` grants each role's user what the topic file's writers and readers say. Each
     * role may produce to the topics it writes and is refused every other; the job may consume its
     * inputs in its groups, a balancer may not consume the engines' events.
     */
    @Test
    void eachRolesKafkaUserWritesOnlyWhatTheTopicFileGrantsIt() throws Exception {
        String prefix = "it-acl-" + System.nanoTime() + ".";
        TopicCatalog catalog = applyTopicsAndGrantRoles(prefix);
        Path secure = Path.of(addresses.clientConfig()).getParent();
        for (String role : dev.kvrouter.common.KafkaRoles.ALL) {
            ClientConfig roleClient = ClientConfig.load(secure.resolve("client-" + role + ".properties"));
            Map<String, Object> producer = new HashMap<>(Map.of("bootstrap.servers", addresses.kafkaBootstrap(),
                    "key.serializer", org.apache.kafka.common.serialization.ByteArraySerializer.class,
                    "value.serializer", org.apache.kafka.common.serialization.ByteArraySerializer.class,
                    "max.block.ms", 15_000, "delivery.timeout.ms", 20_000, "request.timeout.ms", 10_000));
            try (org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]> p =
                         new org.apache.kafka.clients.producer.KafkaProducer<>(KafkaClients.config(roleClient, producer))) {
                for (dev.kvrouter.topics.TopicSpec topic : catalog.topics()) {
                    boolean allowed = topic.writers().contains(role);
                    try {
                        // (keyed: the compacted topics take no record without a key)
                        p.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic.name(), new byte[] {1}, new byte[] {1}))
                                .get(30, TimeUnit.SECONDS);
                        assertThat(allowed).as("%s wrote to %s, which it does not write", role, topic.name()).isTrue();
                    } catch (java.util.concurrent.ExecutionException e) {
                        assertThat(e.getCause()).as("%s refused on %s", role, topic.name())
                                .isInstanceOf(org.apache.kafka.common.errors.TopicAuthorizationException.class);
                        assertThat(allowed).as("%s refused on %s, which it writes", role, topic.name()).isFalse();
                    }
                }
            }
        }
        String kvEvents = prefix + dev.kvrouter.common.TopicNames.KV_EVENTS;
        assertThat(consume(secure.resolve("client-job.properties"), prefix + "job", kvEvents)).as("the job reads its input").isNull();
        assertThat(consume(secure.resolve("client-balancer.properties"), prefix + "job", kvEvents)).as("a balancer does not")
                .isInstanceOf(org.apache.kafka.common.errors.AuthorizationException.class);
    }

    /**
     * The topic file's topics under the prefix, and each role's user granted what the file says
     * (`topics apply --acl`, the job's groups under {@code <prefix>job}), once the broker has them.
     */
    private TopicCatalog applyTopicsAndGrantRoles(String prefix) throws Exception {
        TopicCatalog catalog = TopicCatalog.bundled().withPrefix(prefix);
        Map<String, String> principals = new LinkedHashMap<>();
        dev.kvrouter.common.KafkaRoles.ALL.forEach(role -> principals.put(role, "User:kvr-" + role));
        try (Admin admin = Admin.create(KafkaClients.config(client, Map.of("bootstrap.servers", addresses.kafkaBootstrap())))) {
            TopicApplier applier = new TopicApplier(admin, Duration.ofSeconds(30));
            assertThat(applier.apply(applier.plan(catalog))).isEmpty();
            List<org.apache.kafka.common.acl.AclBinding> granted = dev.kvrouter.topics.TopicAcls.bindings(catalog, principals, prefix + "job");
            admin.createAcls(granted).all().get(30, TimeUnit.SECONDS);
            // Created once the controller has them; the broker authorizes with them once its metadata has caught up.
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!admin.describeAcls(org.apache.kafka.common.acl.AclBindingFilter.ANY).values().get(30, TimeUnit.SECONDS)
                    .containsAll(granted)) {
                assertThat(System.nanoTime()).as("the ACLs in the broker's metadata within %s", WAIT).isLessThan(deadline);
                Thread.sleep(100);
            }
        }
        return catalog;
    }

    /** The Redis settings of a role's client config ({@code secure/client-<role>.properties}). */
    private static RedisSecurity roleRedis(Path secure, String role) {
        return RedisSecurity.fromConfig(ClientConfig.load(secure.resolve("client-" + role + ".properties")).redis());
    }

    /** Polls the topic for a few seconds in the group as the config's user; what was thrown, or null. */
    private Exception consume(Path clientConfig, String group, String topic) {
        Map<String, Object> consumer = new HashMap<>(Map.of("bootstrap.servers", addresses.kafkaBootstrap(), "group.id", group,
                "auto.offset.reset", "earliest",
                "key.deserializer", org.apache.kafka.common.serialization.ByteArrayDeserializer.class,
                "value.deserializer", org.apache.kafka.common.serialization.ByteArrayDeserializer.class));
        try (org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> c =
                     new org.apache.kafka.clients.consumer.KafkaConsumer<>(KafkaClients.config(ClientConfig.load(clientConfig), consumer))) {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (System.nanoTime() < deadline) {
                if (!c.poll(Duration.ofMillis(500)).isEmpty()) {
                    return null;
                }
            }
            return null;
        } catch (org.apache.kafka.common.KafkaException e) {
            return e;
        }
    }

    @Test
    void kafkaRefusesAClientWithoutCredentialsOrWithAWrongPasswordAndSaysWhatToSet() {
        String plain = refusal(ClientConfig.none());
        assertThat(plain).contains("Kafka at " + addresses.kafkaBootstrap()).contains("security.protocol").contains("--client-config");

        Map<String, String> wrong = new HashMap<>(client.all());
        wrong.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"kvr\" password=\"not-it\";");
        String wrongPassword = refusal(ClientConfig.of(wrong));
        assertThat(wrongPassword).contains("Kafka at " + addresses.kafkaBootstrap()).contains("refused the credentials")
                .contains("sasl.jaas.config").doesNotContain("not-it");
        out.println(plain + "\n" + wrongPassword);
        assertNoSecretIn();
    }

    @Test
    void redisRefusesAClientWithoutCredentialsOrWithAWrongPasswordAndSaysWhatToSet() {
        RedisSecurity good = RedisSecurity.fromConfig(client.redis());
        RedisSecurity noPassword = new RedisSecurity(null, null, true, good.truststore(), good.truststorePassword(), "full");
        assertThatThrownBy(() -> open(noPassword))
                .isInstanceOf(RedisRefusedException.class)
                .hasMessageContaining("Redis at " + addresses.redisUrl() + " requires authentication")
                .hasMessageContaining("redis.user").hasMessageContaining("redis.password")
                .satisfies(e -> out.println(e.getMessage()));
        RedisSecurity wrongPassword = new RedisSecurity(good.user(), "not-it", true, good.truststore(), good.truststorePassword(), "full");
        assertThatThrownBy(() -> open(wrongPassword))
                .isInstanceOf(RedisRefusedException.class)
                .hasMessageContaining("refused the credentials of user 'kvr'")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("not-it"))
                .satisfies(e -> out.println(e.getMessage()));
        RedisSecurity untrusted = new RedisSecurity(good.user(), good.password(), true, null, null, "full");
        assertThatThrownBy(() -> open(untrusted))
                .isInstanceOf(RedisRefusedException.class)
                .hasMessageContaining("TLS handshake failed").hasMessageContaining("redis.ssl.truststore.location")
                .satisfies(e -> out.println(e.getMessage()));
        try (ViewConnection c = open(good)) {
            assertThat(c.sync().ping()).isEqualTo("PONG");
        }
        assertNoSecretIn();
    }

    @Test
    void theRegistryRefusesAClientWithoutCredentialsOrWithAWrongPasswordAndSaysWhatToSet() {
        assertThat(addresses.schemaRegistryUrl()).startsWith("https://");
        assertThat(registry(client.registry()).subjects()).isNotNull();

        Map<String, String> noCredentials = new HashMap<>(client.registry());
        noCredentials.remove("basic.auth.user.info");
        assertThatThrownBy(() -> registry(noCredentials).subjects())
                .isInstanceOf(SchemaRegistryException.class)
                .hasMessageContaining("the schema registry at " + addresses.schemaRegistryUrl())
                .hasMessageContaining("HTTP 401").hasMessageContaining("basic.auth.user.info")
                .satisfies(e -> out.println(e.getMessage()));
        Map<String, String> wrongPassword = new HashMap<>(client.registry());
        wrongPassword.put("basic.auth.user.info", "kvr:not-it");
        assertThatThrownBy(() -> registry(wrongPassword).subjects())
                .isInstanceOf(SchemaRegistryException.class)
                .hasMessageContaining("HTTP 401 (no or wrong credentials)")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("not-it"))
                .satisfies(e -> out.println(e.getMessage()));
        Map<String, String> untrusted = new HashMap<>(client.registry());
        untrusted.remove("schema.registry.ssl.truststore.location");
        assertThatThrownBy(() -> registry(untrusted).subjects())
                .isInstanceOf(SchemaRegistryException.Unreachable.class)
                .hasMessageContaining("SSLHandshakeException")
                .satisfies(e -> out.println(e.getMessage()));
        assertNoSecretIn();
    }

    private SchemaRegistryClient registry(Map<String, String> settings) {
        Map<String, String> withUrl = new HashMap<>(settings);
        withUrl.put(RegistrySettings.URL, addresses.schemaRegistryUrl());
        RegistrySettings parsed = RegistrySettings.fromConfig(withUrl);
        out.println(parsed);
        return new SchemaRegistryClient(parsed);
    }

    private ViewConnection open(RedisSecurity security) {
        return ViewConnection.open(addresses.redisUrl(), security, Duration.ofSeconds(2), Duration.ofSeconds(5), 16);
    }

    /** What our code says when an admin client with these settings lists the topics. */
    private String refusal(ClientConfig settings) {
        try (Admin admin = Admin.create(KafkaClients.config(settings, Map.of("bootstrap.servers", addresses.kafkaBootstrap(),
                "default.api.timeout.ms", 8000, "request.timeout.ms", 8000)))) {
            admin.listTopics(new ListTopicsOptions().timeoutMs(8000)).names().get(15, TimeUnit.SECONDS);
        } catch (Exception e) {
            return KafkaClients.explain(addresses.kafkaBootstrap(), e);
        }
        throw new AssertionError("Kafka answered a client with " + settings);
    }

    /** No password of the stack in the stack's logs or in anything the test printed or was told. */
    private void assertNoSecretIn() {
        Path secrets = dir.resolve("stack").resolve("secure").resolve("secrets");
        List<String> values = new ArrayList<>();
        try (Stream<Path> files = Files.list(secrets)) {
            for (Path f : files.toList()) {
                values.add(Files.readString(f).trim());
            }
        } catch (IOException e) {
            throw new AssertionError("cannot read " + secrets, e);
        }
        // The store, Kafka (the stack's client, the broker, each role's user), Redis (the stack's user, each shipped user)
        // and registry passwords.
        assertThat(values).hasSize(5 + dev.kvrouter.common.KafkaRoles.ALL.size() + dev.kvrouter.contract.RedisUsers.ALL.size()).allSatisfy(v -> assertThat(v).hasSizeGreaterThan(16));
        StringBuilder produced = new StringBuilder(said.toString(StandardCharsets.UTF_8));
        try (Stream<Path> logs = Files.walk(dir.resolve("stack").resolve("logs"))) {
            for (Path log : logs.filter(Files::isRegularFile).toList()) {
                produced.append(Files.readString(log, StandardCharsets.ISO_8859_1));
            }
            produced.append(Files.readString(dir.resolve("stack").resolve("secure").resolve("keytool.log")));
            produced.append(Files.readString(Path.of(addresses.clientConfig())));
        } catch (IOException e) {
            throw new AssertionError("cannot read the stack's logs", e);
        }
        assertThat(produced.length()).isGreaterThan(1000);
        for (String secret : values) {
            assertThat(produced.indexOf(secret)).as("a secret in what the test produced").isEqualTo(-1);
        }
    }
}
