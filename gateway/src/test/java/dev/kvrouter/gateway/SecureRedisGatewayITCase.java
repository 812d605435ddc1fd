package dev.kvrouter.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.kvrouter.common.config.ClientConfig;
import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.contract.ViewConnection;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.stack.LocalNginx;
import dev.kvrouter.stack.LocalRedis;
import dev.kvrouter.stack.Ports;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway's Lua library against a Redis as the secure stack runs it (TLS only, ACL users, the
 * default user off), with the settings taken from the client config as './kvr gateway' takes them:
 * it connects, authenticates and calls the library, as the stack's user and as the shipped balancer
 * user; a reader's user, a refused password and an untrusted certificate are each routed on load
 * alone and named as what they are.
 */
class SecureRedisGatewayITCase {

    @TempDir
    Path dir;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void theLibraryReachesASecureRedisAndNamesARefusedPasswordOrCertificate() throws Exception {
        HttpServer engine = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        engine.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            byte[] answer = "{\"choices\":[{\"text\":\"a\"}]}".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        engine.start();
        try (LocalRedis redis = LocalRedis.startSecure(dir.resolve("redis"))) {
            Map<String, String> settings = ClientConfig.load(redis.clientConfig()).redis();
            NginxGateway.RedisAccess access = GatewayCommand.redisAccess(settings, true, dir.resolve("secrets-home"));
            assertThat(access.tls()).isTrue();
            assertThat(access.caFile()).isNotNull();
            assertThat(Files.getPosixFilePermissions(access.passwordFile())).hasSize(2); // owner read and write only
            NginxGateway gateway = NginxGateway.of(Ports.free(), Map.of("e1", "127.0.0.1:" + engine.getAddress().getPort()), "127.0.0.1",
                    redis.port(), "m").withRedisAccess(access);

            // TLS and AUTH work: Redis answers, and the library is not loaded yet.
            assertThat(route(gateway, "good")).isEqualTo("load_only; no_library");
            try (ViewConnection connection = ViewConnection.open(redis.url(), RedisSecurity.fromConfig(settings), Duration.ofSeconds(5),
                    Duration.ofSeconds(5), 1024)) {
                connection.loadFunctions(ViewLayout.functionLibrary());
            }
            // The library answers: there is no view yet.
            assertThat(route(gateway, "loaded")).isEqualTo("load_only; no_view");
            // As the shipped least-privilege users: a balancer's may call the library, a reader's may not.
            assertThat(route(gateway.withRedisAccess(roleAccess(redis, "balancer")), "balancer")).isEqualTo("load_only; no_view");
            assertThat(route(gateway.withRedisAccess(roleAccess(redis, "reader")), "reader")).isEqualTo("load_only; redis_noperm");

            Path wrongPassword = dir.resolve("wrong-password");
            Files.writeString(wrongPassword, "not-it");
            assertThat(route(gateway.withRedisAccess(new NginxGateway.RedisAccess(access.user(), wrongPassword, true, access.caFile(), true, true)),
                    "wrong-password")).isEqualTo("load_only; redis_auth");

            // Trusting another CA (a self-signed certificate of its own) only: the chain does not verify.
            Path otherCa = otherCertificate();
            assertThat(route(gateway.withRedisAccess(new NginxGateway.RedisAccess(access.user(), access.passwordFile(), true, otherCa, true, true)),
                    "untrusted")).isEqualTo("load_only; redis_tls");
        } finally {
            engine.stop(0);
        }
    }

    private NginxGateway.RedisAccess roleAccess(LocalRedis redis, String role) throws java.io.IOException {
        return GatewayCommand.redisAccess(ClientConfig.load(redis.clientConfig(role)).redis(), true, dir.resolve("secrets-" + role));
    }

    /** The route the gateway says it took for one prompt of token ids, through an nginx of its own. */
    private String route(NginxGateway gateway, String name) throws Exception {
        Path prefix = dir.resolve("nginx-" + name);
        NginxGateway here = gateway.withListenPort(Ports.free());
        try (LocalNginx nginx = LocalNginx.start(prefix, here.render(prefix, LocalNginx.modulesDirectory()), here.listenPort(), System.err)) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + here.listenPort() + "/v1/completions"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"prompt\":" + java.util.Arrays.toString(
                            java.util.stream.IntStream.range(0, 64).toArray()).replace(" ", "") + "}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(() -> name + ": " + r.body() + "\n" + errorLog(prefix)).isEqualTo(200);
            return r.headers().firstValue("X-Kvr-Route").orElse("");
        }
    }

    /** A self-signed certificate that signed nothing Redis has, as PEM (the JDK's keytool). */
    private Path otherCertificate() throws Exception {
        Path store = dir.resolve("other.p12");
        Path pem = dir.resolve("other-ca.pem");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        for (List<String> args : List.of(
                List.of(keytool, "-genkeypair", "-alias", "other", "-keyalg", "EC", "-dname", "CN=other", "-keystore", store.toString(),
                        "-storepass", "changeit", "-validity", "2"),
                List.of(keytool, "-exportcert", "-rfc", "-alias", "other", "-keystore", store.toString(), "-storepass", "changeit",
                        "-file", pem.toString()))) {
            Process p = new ProcessBuilder(args).redirectErrorStream(true).redirectOutput(dir.resolve("keytool.log").toFile()).start();
            assertThat(p.waitFor()).as(String.join(" ", args)).isZero();
        }
        return pem;
    }

    private static String errorLog(Path prefix) {
        try {
            return Files.readString(prefix.resolve("logs/error.log"));
        } catch (java.io.IOException e) {
            return "(no error log: " + e + ")";
        }
    }
}
