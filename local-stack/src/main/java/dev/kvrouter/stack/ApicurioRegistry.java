package dev.kvrouter.stack;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;

/**
 * Apicurio Registry (in-memory storage, global BACKWARD rule) in its own JVM, serving the Confluent
 * Schema Registry API at {@code /apis/ccompat/v7}. Its runner archive is fetched into the local
 * Maven repository once and unpacked into a cache folder once.
 */
final class ApicurioRegistry {

    static final String CCOMPAT_PATH = "/apis/ccompat/v7";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private ApicurioRegistry() {}

    static Process start(Path stateDir, Path runnerJar, int port, int managementPort, String marker) {
        List<String> command = List.of(LocalStack.javaExecutable(),
                "-Xms64m", "-Xmx512m", "-XX:+UseG1GC", "-Djava.awt.headless=true", marker,
                "-Dquarkus.http.host=127.0.0.1",
                "-Dquarkus.http.port=" + port,
                "-Dquarkus.management.host=127.0.0.1",
                "-Dquarkus.management.port=" + managementPort,
                "-Dquarkus.log.console.json=false",
                // Apicurio's default is NONE; every real deployment of ours expects BACKWARD.
                "-Dapicurio.rules.global.compatibility=BACKWARD",
                "-jar", runnerJar.toString());
        return Processes.startDetached(command, runnerJar.getParent(), stateDir.resolve("logs").resolve("registry.log"));
    }

    static boolean answers(String url) {
        return answers(url, null);
    }

    /** True when the registry lists its subjects; through the secure stack's gateway (TLS, basic auth) with {@code security}. */
    static boolean answers(String url, StackSecurity security) {
        HttpClient http = security == null ? HTTP
                : HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).sslContext(security.sslContext()).build();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url + "/subjects")).timeout(Duration.ofSeconds(3)).GET();
        if (security != null) {
            request.header("Authorization", "Basic " + java.util.Base64.getEncoder().encodeToString(
                    (StackSecurity.CLIENT_USER + ":" + security.secret("registry-password")).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        }
        try {
            HttpResponse<Void> response = http.send(request.build(), HttpResponse.BodyHandlers.discarding());
            return response.statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * The runner jar, fetched and unpacked if needed. Maven Central does not serve Apicurio's
     * parent POM, so the archive cannot be a declared dependency; {@code mvn dependency:get}
     * without transitives fetches just the archive.
     */
    static Path ensureRunnerJar(String version, Path mavenRepo, Path cacheDir, java.io.PrintStream out) {
        Path unpacked = cacheDir.resolve("apicurio-registry-app-" + version);
        Path runner = unpacked.resolve("apicurio-registry-app-" + version + "-runner.jar");
        if (Files.exists(runner)) {
            return runner;
        }
        Path archive = mavenRepo.resolve("io/apicurio/apicurio-registry-app/" + version
                + "/apicurio-registry-app-" + version + "-all.tar.gz");
        try {
            Files.createDirectories(cacheDir);
            if (!Files.exists(archive)) {
                out.println("fetching Apicurio Registry " + version + " into " + mavenRepo + " (once, ~110 MB)");
                Path log = cacheDir.resolve("apicurio-fetch.log");
                int exit = Processes.runToCompletion(List.of("mvn", "-B", "-q",
                        "-Dmaven.repo.local=" + mavenRepo,
                        "dependency:get", "-Dtransitive=false",
                        "-Dartifact=io.apicurio:apicurio-registry-app:" + version + ":tar.gz:all"),
                        cacheDir, log, Duration.ofMinutes(10));
                if (exit != 0 || !Files.exists(archive)) {
                    throw new IllegalStateException("could not fetch Apicurio Registry " + version
                            + " from Maven Central (exit " + exit + "):\n" + Processes.tail(log, 20));
                }
            }
            // Unpack next to the target and rename, so a half-unpacked folder is never used.
            Path tmp = Files.createTempDirectory(cacheDir, "apicurio-unpack-");
            int exit = Processes.runToCompletion(List.of("tar", "-xzf", archive.toString(), "-C", tmp.toString()),
                    cacheDir, cacheDir.resolve("apicurio-unpack.log"), Duration.ofMinutes(5));
            if (exit != 0) {
                throw new IllegalStateException("could not unpack " + archive + " (tar exit " + exit + ")");
            }
            try {
                Files.move(tmp, unpacked, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException raced) {
                Directories.deleteRecursively(tmp);
                if (!Files.exists(runner)) {
                    throw raced;
                }
            }
            return runner;
        } catch (IOException e) {
            throw new IllegalStateException("could not prepare Apicurio Registry in " + cacheDir + ": " + e, e);
        }
    }
}
