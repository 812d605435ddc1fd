package dev.kvrouter.stack;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * The secure stack's registry address: TLS and HTTP basic auth in front of Apicurio Registry, which
 * listens on loopback behind it. Apicurio 3 authenticates only against an OpenID Connect identity
 * server (its basic auth exchanges the credentials for a token there); a production registry sits
 * behind such a server or an authenticating ingress, which is what this stands in for. Its own JVM
 * (started by {@link LocalStack}), the JDK's HTTPS server and HTTP client only; the passwords come
 * from files, never from its command line.
 *
 * <pre>java -cp kvr-local-stack.jar dev.kvrouter.stack.RegistryGateway PORT UPSTREAM KEYSTORE STORE_PASSWORD_FILE USER PASSWORD_FILE</pre>
 */
public final class RegistryGateway {

    /** The largest request body forwarded (a schema); bigger ones are refused with 413. */
    private static final int MAX_BODY_BYTES = 8 * 1024 * 1024;
    private static final List<String> FORWARDED_HEADERS = List.of("Content-Type", "Accept");

    private final URI upstream;
    private final byte[] expectedAuthorization;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private RegistryGateway(URI upstream, String user, String password) {
        this.upstream = upstream;
        this.expectedAuthorization = ("Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)))
                .getBytes(StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: RegistryGateway PORT UPSTREAM KEYSTORE STORE_PASSWORD_FILE USER PASSWORD_FILE");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        String storePassword = read(Path.of(args[3]));
        RegistryGateway gateway = new RegistryGateway(URI.create(args[1].replaceAll("/+$", "")), args[4], read(Path.of(args[5])));
        HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", port), 64);
        server.setHttpsConfigurator(new HttpsConfigurator(serverContext(Path.of(args[2]), storePassword)));
        ExecutorService workers = Executors.newFixedThreadPool(8);
        server.setExecutor(workers);
        server.createContext("/", gateway::handle);
        server.start();
        System.out.println("registry gateway: https://127.0.0.1:" + port + " -> " + args[1] + " (basic auth, user " + args[4] + ")");
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String given = exchange.getRequestHeaders().getFirst("Authorization");
            if (given == null || !MessageDigest.isEqual(given.getBytes(StandardCharsets.UTF_8), expectedAuthorization)) {
                exchange.getResponseHeaders().set("WWW-Authenticate", "Basic realm=\"kv-router registry\"");
                reply(exchange, 401, "{\"error_code\":40101,\"message\":\"" + (given == null ? "credentials required" : "wrong credentials") + "\"}");
                return;
            }
            byte[] body;
            try (InputStream in = exchange.getRequestBody()) {
                body = in.readNBytes(MAX_BODY_BYTES + 1);
            }
            if (body.length > MAX_BODY_BYTES) {
                reply(exchange, 413, "{\"error_code\":41301,\"message\":\"request body over " + MAX_BODY_BYTES + " bytes\"}");
                return;
            }
            HttpRequest.Builder forward = HttpRequest.newBuilder(upstream.resolve(exchange.getRequestURI().toString()))
                    .timeout(Duration.ofSeconds(30))
                    .method(exchange.getRequestMethod(), body.length == 0 ? HttpRequest.BodyPublishers.noBody()
                            : HttpRequest.BodyPublishers.ofByteArray(body));
            for (String header : FORWARDED_HEADERS) {
                String value = exchange.getRequestHeaders().getFirst(header);
                if (value != null) {
                    forward.header(header, value);
                }
            }
            HttpResponse<byte[]> answer;
            try {
                answer = http.send(forward.build(), HttpResponse.BodyHandlers.ofByteArray());
            } catch (IOException e) {
                reply(exchange, 502, "{\"error_code\":50201,\"message\":\"the registry behind the gateway does not answer\"}");
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                reply(exchange, 503, "{\"error_code\":50301,\"message\":\"the gateway is stopping\"}");
                return;
            }
            answer.headers().firstValue("Content-Type").ifPresent(v -> exchange.getResponseHeaders().set("Content-Type", v));
            byte[] out = answer.body();
            exchange.sendResponseHeaders(answer.statusCode(), out.length == 0 ? -1 : out.length);
            if (out.length > 0) {
                exchange.getResponseBody().write(out);
            }
        }
    }

    private static void reply(HttpExchange exchange, int status, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, body.length);
        exchange.getResponseBody().write(body);
    }

    private static SSLContext serverContext(Path keystore, String password) throws IOException, GeneralSecurityException {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keystore)) {
            store.load(in, password.toCharArray());
        }
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, password.toCharArray());
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys.getKeyManagers(), null, null);
        return context;
    }

    private static String read(Path file) throws IOException {
        return Files.readString(file, StandardCharsets.UTF_8).trim();
    }

    /** The gateway's command line (passwords by file), for {@link Processes#startDetached}. */
    static List<String> command(int port, String upstream, StackSecurity security, String marker) {
        String classpath;
        try {
            classpath = Path.of(RegistryGateway.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException("cannot locate the kvr-local-stack classes", e);
        }
        return List.of(LocalStack.javaExecutable(), "-Xms16m", "-Xmx64m", "-XX:+UseSerialGC", marker, "-cp", classpath,
                RegistryGateway.class.getName(), Integer.toString(port), upstream, security.serverKeystore().toString(),
                security.secretFile("store-password").toString(), StackSecurity.CLIENT_USER,
                security.secretFile("registry-password").toString());
    }
}
