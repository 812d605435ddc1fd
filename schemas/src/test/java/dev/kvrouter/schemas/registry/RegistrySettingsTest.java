package dev.kvrouter.schemas.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class RegistrySettingsTest {

    @Test
    void printedWithoutTheUserInfo() {
        RegistrySettings s = RegistrySettings.fromConfig(Map.of(RegistrySettings.URL, "https://r:8081",
                RegistrySettings.BASIC_AUTH_USER_INFO, "kvr:pw-6"));
        assertThat(s.basicAuthUserInfo()).contains("kvr:pw-6");
        assertThat(s.toString()).doesNotContain("pw-6").contains("basicAuthUserInfo=[redacted]");
    }

    @Test
    void aTrustStoreThatCannotBeReadIsAProblemNamedWithTheOthers() {
        assertThatThrownBy(() -> RegistrySettings.fromConfig(Map.of(RegistrySettings.URL, "https://r:8081",
                RegistrySettings.TRUSTSTORE_LOCATION, "/no/such/ca.p12", RegistrySettings.BASIC_AUTH_USER_INFO, "no-colon")))
                .hasMessageContaining(RegistrySettings.TRUSTSTORE_LOCATION + ": cannot read /no/such/ca.p12")
                .hasMessageContaining(RegistrySettings.BASIC_AUTH_USER_INFO + " must be user:password");
    }

    @Test
    void basicAuthIsRefusedOverPlainHttp() {
        assertThatThrownBy(() -> RegistrySettings.fromConfig(Map.of(RegistrySettings.URL, "https://r1:8081,http://r2:8081",
                RegistrySettings.BASIC_AUTH_USER_INFO, "kvr:pw-7")))
                .hasMessageContaining("the password would cross the network in clear; use https")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("pw-7"));
        assertThat(RegistrySettings.fromConfig(Map.of(RegistrySettings.URL, "http://r2:8081")).basicAuthUserInfo()).isEmpty();
    }

    @Test
    void withoutATrustStoreTheJvmsDefaultContextIsUsed() throws Exception {
        RegistrySettings s = RegistrySettings.of("https://r:8081");
        assertThat(s.truststore()).isEmpty();
        assertThat(s.sslContext()).isSameAs(javax.net.ssl.SSLContext.getDefault());
    }
}
