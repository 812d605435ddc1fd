package dev.kvrouter.stack;

import dev.kvrouter.common.config.ClientConfig;
import dev.kvrouter.common.config.TrustStores;
import dev.kvrouter.contract.RedisUsers;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import javax.net.ssl.SSLContext;

/**
 * The secure stack's material, in {@code <state>/secure}: a certificate authority and a server
 * certificate for 127.0.0.1 made with the JDK's {@code keytool}, random passwords (one file each,
 * readable by the owner only), and {@code client.properties}, the client config every kv-router
 * component reads ({@code KVR_CLIENT_CONFIG}), which names the password files instead of holding
 * the passwords.
 */
final class StackSecurity {

    /** The SCRAM user every kv-router client is, on Kafka, Redis (ACL) and the registry gateway. */
    static final String CLIENT_USER = "kvr";
    /** The broker's own SCRAM user (inter-broker connections). */
    static final String BROKER_USER = "broker";
    /**
     * The roles of the catalog's writers and readers (TopicAcls.ROLES), each a SCRAM user {@code kvr-<role>}
     * with a client config of its own ({@link #roleClientConfig}); the broker's authorizer lets each do only
     * what `kvr topics apply --acl` grants it. {@link #CLIENT_USER} stays a super user (the stack's own tools).
     */
    static final List<String> ROLES = dev.kvrouter.common.KafkaRoles.ALL;
    /**
     * The Redis user of each role's client config, from the shipped least-privilege users
     * ({@link RedisUsers}): the job and a balancer as their roles, the bridge none (it does not use
     * Redis). The reader has a client config of its own, {@code client-reader.properties}, with Redis
     * settings only.
     */
    static final java.util.Map<String, String> REDIS_USER_OF_ROLE = java.util.Map.of(
            dev.kvrouter.common.KafkaRoles.JOB, RedisUsers.JOB, dev.kvrouter.common.KafkaRoles.BALANCER, RedisUsers.BALANCER);
    static final String READER = "reader";

    private final Path dir;

    private StackSecurity(Path dir) {
        this.dir = dir;
    }

    static Path dirOf(Path stateDir) {
        return stateDir.resolve("secure");
    }

    /** The material of a secure stack that was made already; null when there is none. */
    static StackSecurity existing(Path stateDir) {
        Path dir = dirOf(stateDir);
        return Files.exists(dir.resolve("client.properties")) ? new StackSecurity(dir) : null;
    }

    /** Makes fresh material (every start of a secure stack: new passwords, new certificates). */
    static StackSecurity create(Path stateDir) {
        Path dir = dirOf(stateDir);
        Directories.deleteRecursively(dir);
        StackSecurity s = new StackSecurity(dir);
        try {
            Files.createDirectories(dir.resolve("secrets"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
        for (String secret : List.of("store-password", "kafka-password", "broker-password", "redis-password", "registry-password")) {
            s.writeSecret(secret, randomPassword());
        }
        for (String role : ROLES) {
            s.writeSecret(roleSecret(role), randomPassword());
        }
        for (String user : RedisUsers.ALL) {
            s.writeSecret(redisSecret(user), randomPassword());
        }
        s.makeCertificates();
        KafkaBroker.write(s.clientConfig(), clientProperties(s, CLIENT_USER, "kafka-password", CLIENT_USER, "redis-password"));
        for (String role : ROLES) {
            String redisUser = REDIS_USER_OF_ROLE.get(role);
            KafkaBroker.write(s.roleClientConfig(role), clientProperties(s, roleUser(role), roleSecret(role), redisUser,
                    redisUser == null ? null : redisSecret(redisUser)));
        }
        KafkaBroker.write(s.roleClientConfig(READER), clientProperties(s, null, null, RedisUsers.READER, redisSecret(RedisUsers.READER)));
        return s;
    }

    Path clientConfig() {
        return dir.resolve("client.properties");
    }

    /** The client config of one role's Kafka user ({@link #ROLES}); the registry and Redis as in {@link #clientConfig()}. */
    Path roleClientConfig(String role) {
        return dir.resolve("client-" + role + ".properties");
    }

    static String roleUser(String role) {
        return "kvr-" + role;
    }

    static String roleSecret(String role) {
        return "kafka-" + role + "-password";
    }

    static String redisSecret(String redisUser) {
        return "redis-" + redisUser + "-password";
    }

    /**
     * The Redis users of the secure stack: the stack's own {@code kvr} (every command: its tools and
     * the tests' set-up) and the shipped least-privilege users for any view prefix, each password kept
     * by Redis as its SHA-256.
     */
    List<String> redisUserDirectives() {
        java.util.Map<String, String> passwords = new java.util.HashMap<>();
        for (String user : RedisUsers.ALL) {
            passwords.put(user, "#" + sha256(redisSecret(user)));
        }
        List<String> lines = new ArrayList<>();
        lines.add("user default off");
        lines.add("user " + CLIENT_USER + " on #" + sha256("redis-password") + " ~* &* +@all");
        lines.addAll(RedisUsers.directives("*", passwords));
        return lines;
    }

    Path serverKeystore() {
        return dir.resolve("server.p12");
    }

    Path truststore() {
        return dir.resolve("truststore.p12");
    }

    Path redisCertificate() {
        return dir.resolve("server.crt.pem");
    }

    Path redisKey() {
        return dir.resolve("server.key.pem");
    }

    Path caCertificate() {
        return dir.resolve("ca.crt");
    }

    Path secretFile(String name) {
        return dir.resolve("secrets").resolve(name);
    }

    String secret(String name) {
        try {
            return Files.readString(secretFile(name), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + secretFile(name), e);
        }
    }

    String storePassword() {
        return secret("store-password");
    }

    /** The client settings, resolved (the test and the stack's own readiness checks use them). */
    ClientConfig client() {
        return ClientConfig.load(clientConfig());
    }

    /** The SHA-256 of a secret in hex, as Redis's ACL takes a password without holding it ({@code #<hash>}). */
    String sha256(String name) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(secret(name).getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A SCRAM-SHA-512 credential for {@code kafka-storage format --add-scram}, salted here (RFC 5802's
     * Hi(): PBKDF2 with HMAC-SHA-512), so the password itself is on no command line.
     */
    String scramCredential(String user, String secretName) {
        try {
            byte[] salt = new byte[16];
            new SecureRandom().nextBytes(salt);
            int iterations = 8192;
            javax.crypto.SecretKeyFactory pbkdf2 = javax.crypto.SecretKeyFactory.getInstance("PBKDF2WithHmacSHA512");
            byte[] salted = pbkdf2.generateSecret(new javax.crypto.spec.PBEKeySpec(secret(secretName).toCharArray(), salt, iterations, 512))
                    .getEncoded();
            Base64.Encoder b64 = Base64.getEncoder();
            return "SCRAM-SHA-512=[name=" + user + ",iterations=" + iterations + ",salt=\"" + b64.encodeToString(salt)
                    + "\",saltedpassword=\"" + b64.encodeToString(salted) + "\"]";
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot salt the SCRAM password of " + user, e);
        }
    }

    /** A TLS context trusting the stack's CA. */
    SSLContext sslContext() {
        try {
            return TrustStores.sslContext(truststore(), storePassword());
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot load " + truststore(), e);
        }
    }

    /** A client config: Kafka and the registry as {@code kafkaUser} (none: Redis only), Redis as {@code redisUser} (none: TLS only). */
    private static String clientProperties(StackSecurity s, String kafkaUser, String kafkaSecret, String redisUser, String redisSecret) {
        String store = "${file:" + s.secretFile("store-password") + "}";
        List<String> lines = new ArrayList<>(List.of(
                "# kv-router client config of the secure local stack ('kvr stack up --secure'). Secrets are read from",
                "# the files named, never written here. README, \"Security\", explains every setting."));
        if (kafkaUser != null) {
            lines.addAll(List.of(
                    "security.protocol=SASL_SSL",
                    "sasl.mechanism=SCRAM-SHA-512",
                    "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + kafkaUser
                            + "\" password=\"${file:" + s.secretFile(kafkaSecret) + "}\";",
                    "ssl.truststore.type=PKCS12",
                    "ssl.truststore.location=" + s.truststore(),
                    "ssl.truststore.password=" + store,
                    "basic.auth.credentials.source=USER_INFO",
                    "basic.auth.user.info=" + CLIENT_USER + ":${file:" + s.secretFile("registry-password") + "}",
                    "schema.registry.ssl.truststore.location=" + s.truststore(),
                    "schema.registry.ssl.truststore.password=" + store));
        }
        if (redisUser != null) {
            lines.add("redis.user=" + redisUser);
            lines.add("redis.password=${file:" + s.secretFile(redisSecret) + "}");
        }
        lines.addAll(List.of(
                "redis.ssl=true",
                "redis.ssl.truststore.location=" + s.truststore(),
                "redis.ssl.truststore.password=" + store,
                "redis.ssl.ca.location=" + s.caCertificate(),
                ""));
        return String.join("\n", lines);
    }

    /**
     * A CA, a server key pair signed by it for 127.0.0.1 and localhost (PKCS12, for Kafka and the
     * registry gateway; PEM, for Redis), and a trust store holding the CA. keytool reads the store
     * password from a file ({@code :file}), so it is on no command line.
     */
    private void makeCertificates() {
        Path ca = dir.resolve("ca.p12");
        Path csr = dir.resolve("server.csr");
        Path signed = dir.resolve("server.crt");
        String pass = secretFile("store-password").toString();
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=kv-router local stack CA",
                "-ext", "bc:c", "-validity", "30", "-keystore", ca.toString(), "-storetype", "PKCS12",
                "-storepass:file", pass);
        keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", ca.toString(), "-storepass:file", pass,
                "-file", caCertificate().toString());
        keytool("-genkeypair", "-alias", "server", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=127.0.0.1",
                "-validity", "30", "-keystore", serverKeystore().toString(), "-storetype", "PKCS12", "-storepass:file", pass);
        keytool("-certreq", "-alias", "server", "-keystore", serverKeystore().toString(), "-storepass:file", pass,
                "-file", csr.toString());
        keytool("-gencert", "-rfc", "-alias", "ca", "-keystore", ca.toString(), "-storepass:file", pass, "-infile", csr.toString(),
                "-outfile", signed.toString(), "-validity", "30", "-ext", "SAN=ip:127.0.0.1,dns:localhost",
                "-ext", "eku=serverAuth,clientAuth");
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caCertificate().toString(),
                "-keystore", serverKeystore().toString(), "-storepass:file", pass);
        keytool("-importcert", "-alias", "server", "-file", signed.toString(), "-keystore", serverKeystore().toString(),
                "-storepass:file", pass);
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caCertificate().toString(), "-keystore", truststore().toString(),
                "-storetype", "PKCS12", "-storepass:file", pass);
        exportPem();
        // The stores holding private keys, and the secrets' folder, for the owner only (the CA's key
        // could sign a certificate every client of this stack would trust).
        ownerOnly(ca, "rw-------");
        ownerOnly(serverKeystore(), "rw-------");
        ownerOnly(dir.resolve("secrets"), "rwx------");
    }

    private static void ownerOnly(Path path, String permissions) {
        try {
            Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(permissions));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot restrict " + path, e);
        }
    }

    /** Redis takes PEM: the server's certificate chain and its private key, out of the PKCS12 store. */
    private void exportPem() {
        try (InputStream in = Files.newInputStream(serverKeystore())) {
            KeyStore store = KeyStore.getInstance("PKCS12");
            char[] password = storePassword().toCharArray();
            store.load(in, password);
            PrivateKey key = (PrivateKey) store.getKey("server", password);
            StringBuilder chain = new StringBuilder();
            for (Certificate c : store.getCertificateChain("server")) {
                chain.append(pem("CERTIFICATE", c.getEncoded()));
            }
            KafkaBroker.write(redisCertificate(), chain.toString());
            writeOwnerOnly(redisKey(), pem("PRIVATE KEY", key.getEncoded()));
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot export the server key for Redis from " + serverKeystore(), e);
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    private void keytool(String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        Path log = dir.resolve("keytool.log");
        int exit = Processes.runToCompletion(command, dir, log, Duration.ofSeconds(60));
        if (exit != 0) {
            throw new IllegalStateException("keytool " + args[0] + " failed (exit " + exit + "):\n" + Processes.tail(log, 10));
        }
    }

    private void writeSecret(String name, String value) {
        writeOwnerOnly(secretFile(name), value + "\n");
    }

    static void writeOwnerOnly(Path file, String content) {
        try {
            Files.createDirectories(file.getParent());
            Files.deleteIfExists(file);
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(file, content, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    private static String randomPassword() {
        byte[] bytes = new byte[24];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
