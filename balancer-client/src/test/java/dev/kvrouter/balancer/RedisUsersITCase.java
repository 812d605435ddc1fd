package dev.kvrouter.balancer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

import dev.kvrouter.balancer.KvRouterClient.Pick;
import dev.kvrouter.balancer.KvRouterClient.Source;
import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.contract.RedisUsers;
import dev.kvrouter.contract.ViewLayout;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped Redis users (redis-users.conf) on a real Redis of the test's own, as a deployment
 * would set them up for its view's prefix: each does its work, and is refused everything its role
 * should not do — above all, a balancer can place requests and cannot write the view or load Lua.
 */
class RedisUsersITCase {

    private static final String PASSWORD = "pw-not-a-secret";

    @TempDir
    Path dir;

    private PrivateViewRedis view;
    private RedisCommands<String, String> admin;
    private final ViewLayout layout = new ViewLayout("acl:");
    private final ViewLayout otherView = new ViewLayout("other:");
    private final long[] prompt = {11, 12, 13};
    private final List<AutoCloseable> opened = new java.util.ArrayList<>();

    @BeforeEach
    void setUp() {
        view = new PrivateViewRedis(dir.resolve("redis"));
        admin = view.redis;
        Map<String, String> passwords = new HashMap<>();
        RedisUsers.ALL.forEach(user -> passwords.put(user, ">" + PASSWORD));
        for (String directive : RedisUsers.directives(layout.prefix(), passwords)) {
            String[] words = directive.split(" ");
            assertThat(words[0]).isEqualTo("user");
            CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8).add("SETUSER");
            for (int i = 1; i < words.length; i++) {
                args.add(words[i]);
            }
            assertThat(admin.dispatch(CommandType.ACL, new StatusOutput<>(StringCodec.UTF8), args)).isEqualTo("OK");
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : opened) {
            c.close();
        }
        view.close();
    }

    private RedisCommands<String, String> as(String user) {
        RedisURI server = RedisURI.create(view.url());
        RedisURI uri = RedisURI.Builder.redis(server.getHost(), server.getPort()).withAuthentication(user, PASSWORD.toCharArray())
                .withTimeout(Duration.ofSeconds(2)).build();
        RedisClient client = RedisClient.create(uri);
        StatefulRedisConnection<String, String> connection = client.connect();
        opened.add(() -> {
            connection.close();
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        });
        return connection.sync();
    }

    private static void refused(String what, ThrowingCallable call) {
        assertThatThrownBy(call).as(what).hasMessageContaining("NOPERM");
    }

    /** The job's work: the library, the view's keys, which Redis it is. */
    private void writeViewAsTheJob() {
        RedisCommands<String, String> job = as(RedisUsers.JOB);
        job.functionLoad(ViewLayout.functionLibrary(), true);
        Long layoutLoaded = job.fcallReadOnly(ViewLayout.LAYOUT_FUNCTION, ScriptOutputType.INTEGER);
        assertThat(layoutLoaded).isEqualTo((long) ViewLayout.LAYOUT_VERSION);
        assertThat(job.functionList("kvrouter")).isNotEmpty();
        assertThat(job.info("server")).contains("run_id:");
        long now = System.currentTimeMillis();
        job.hset(layout.metaKey(), Map.of("updated_ms", Long.toString(now + 3_600_000), "busy_factor", "2.0", "confidence_floor", "0.05",
                "tag_depth", "2"));
        job.hset(layout.enginesKey(), Map.of("e1", new EngineEntry("READY", 0, 0, 500, 600_000, 1, false, now).encode(),
                "e2", new EngineEntry("READY", 0, 0, 500, 600_000, 1, false, now).encode()));
        for (int position = 1; position <= 3; position++) {
            job.hset(layout.groupKey(ViewLayout.tag(prompt, position, 2)), ViewLayout.hex(prompt[position - 1]), ViewLayout.holder("e2", now, 1));
        }
        job.pexpire(layout.enginesKey(), 60_000);

        refused("the job outside its prefix", () -> job.hset(otherView.metaKey(), "updated_ms", "1"));
        refused("the job flushing Redis", () -> job.flushall());
        refused("the job reconfiguring Redis", () -> job.configSet("maxmemory", "1"));
        refused("the job listing every key", () -> job.keys("*"));
    }

    @Test
    void theJobWritesTheViewAndABalancerPlacesAndReleasesButCannotWriteTheViewOrLoadLua() {
        writeViewAsTheJob();
        try (KvRouterClient balancer = new KvRouterClient(KvRouterClient.Options.builder(view.url()).keyPrefix(layout.prefix())
                .balancerId("gw-1").security(new RedisSecurity(RedisUsers.BALANCER, PASSWORD, false, null, null, "full")).build())) {
            Pick pick = balancer.pick(prompt, "chat", "c1", "req-1");
            assertThat(pick.source()).as("the view answered (no fallback): %s", pick).isEqualTo(Source.VIEW);
            assertThat(pick.engineId()).isEqualTo("e2");
            assertThat(pick.matchedBlocks()).isEqualTo(3);
            assertThat(admin.hget(layout.reservationsKey(), balancer.reservationId("req-1"))).as("its reservation").startsWith("e2|");
            assertThat(balancer.done("req-1")).isTrue();
            assertThat(admin.hlen(layout.reservationsKey())).isZero();
        }

        RedisCommands<String, String> balancer = as(RedisUsers.BALANCER);
        assertThat(balancer.hgetall(layout.enginesKey())).as("it reads the view (the client-side pick, the fallback)").hasSize(2);
        String before = admin.hget(layout.enginesKey(), "e1");
        refused("a balancer writing the engine table", () -> balancer.hset(layout.enginesKey(), "e1", "DEAD"));
        refused("a balancer writing a block's holders", () -> balancer.hset(layout.groupKey(prompt[0]), ViewLayout.hex(prompt[0]), "evil=1.1"));
        refused("a balancer switching a class off", () -> balancer.hset(layout.classesKey(), "chat", "off"));
        refused("a balancer deleting the meta key", () -> balancer.del(layout.metaKey()));
        refused("a balancer loading Lua", () -> balancer.functionLoad(ViewLayout.functionLibrary(), true));
        refused("a balancer dropping every function", () -> balancer.functionFlush(io.lettuce.core.FlushMode.SYNC));
        refused("a balancer flushing Redis", () -> balancer.flushall());
        refused("a balancer reconfiguring Redis", () -> balancer.configSet("maxmemory", "1"));
        refused("a balancer writing another view's reservations",
                () -> balancer.fcall(ViewLayout.DONE_FUNCTION, ScriptOutputType.INTEGER, otherView.functionKeys(), "req-1"));
        // A layout-8 call gives the view's keys, which FCALL checks as written: refused before the function runs.
        refused("a balancer declaring view keys", () -> balancer.fcall(ViewLayout.PICK_FUNCTION, ScriptOutputType.MULTI,
                new String[] {layout.metaKey(), layout.enginesKey(), layout.groupKey(prompt[0]), layout.groupKey(prompt[1]),
                        layout.classesKey(), layout.reservationsKey()}, "2000", "", "", "r", "3", ViewLayout.packedHex(prompt, 3)));
        assertThat(admin.hget(layout.enginesKey(), "e1")).as("the view as the job wrote it").isEqualTo(before);
        assertThat(admin.functionList("kvrouter")).isNotEmpty();
    }

    @Test
    void aReaderPeeksAndReadsAndCannotPlaceOrWrite() {
        writeViewAsTheJob();
        try (KvRouterClient reader = new KvRouterClient(KvRouterClient.Options.builder(view.url()).keyPrefix(layout.prefix())
                .security(new RedisSecurity(RedisUsers.READER, PASSWORD, false, null, null, "full")).build().observing())) {
            Pick peek = reader.pick(prompt, "chat", "c1", "req-1");
            assertThat(peek.source()).as("kvr_peek answered: %s", peek).isEqualTo(Source.VIEW);
            assertThat(peek.engineId()).isEqualTo("e2");
            assertThat(admin.exists(layout.reservationsKey())).as("a peek reserves nothing").isZero();
        }
        RedisCommands<String, String> reader = as(RedisUsers.READER);
        assertThat(reader.hget(layout.metaKey(), "tag_depth")).isEqualTo("2");
        refused("a reader placing a request", () -> reader.fcall(ViewLayout.PICK_FUNCTION, ScriptOutputType.MULTI, layout.functionKeys(),
                "2000", "", "", "r", "3", ViewLayout.packedHex(prompt, 3)));
        refused("a reader releasing a request", () -> reader.fcall(ViewLayout.DONE_FUNCTION, ScriptOutputType.INTEGER,
                layout.functionKeys(), "r"));
        refused("a reader writing the view", () -> reader.hset(layout.enginesKey(), "e1", "DEAD"));
        refused("a reader writing a reservation", () -> reader.hset(layout.reservationsKey(), "r", "e1|0|0|"));
        refused("a reader loading Lua", () -> reader.functionLoad(ViewLayout.functionLibrary(), true));
    }
}
