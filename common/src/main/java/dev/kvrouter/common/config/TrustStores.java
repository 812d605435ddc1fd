package dev.kvrouter.common.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** TLS contexts from trust stores, for the JDK's HTTP clients and sockets. */
public final class TrustStores {

    private TrustStores() {}

    /**
     * A TLS context trusting the certificates of this store (PKCS12, or JKS, which the PKCS12 type
     * also reads); the password may be null for a store without one.
     *
     * @throws IOException              when the store cannot be read
     * @throws GeneralSecurityException when it is not a trust store or the password is wrong
     */
    public static SSLContext sslContext(Path store, String password) throws IOException, GeneralSecurityException {
        KeyStore keys = KeyStore.getInstance(KeyStore.getDefaultType());
        try (InputStream in = Files.newInputStream(store)) {
            keys.load(in, password == null ? null : password.toCharArray());
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(keys);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        return context;
    }
}
