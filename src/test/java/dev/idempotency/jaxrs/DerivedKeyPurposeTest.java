package dev.idempotency.jaxrs;

import dev.idempotency.DerivedKey;
import dev.idempotency.config.SettingsSource;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Where DerivedKeyClientFilter, registered on a MicroProfile Rest Client interface, finds what a call's key is
 * derived for: the method's @DerivedKey, the interface's, else the configuration under the interface's name
 * (a real Rest Client on a server: StatusCodesIT).
 */
class DerivedKeyPurposeTest {
    @DerivedKey("acquirer.charge")
    interface Acquirer {
        void charge();

        @DerivedKey(value = "acquirer.refund", header = "X-Request-Key")
        void refund();
    }

    interface Unnamed {
        void send();
    }

    @Test
    void theMethodsAnnotationWinsOverTheInterfacesAndTheConfigurationServesTheRest() throws Exception {
        SettingsSource none = key -> Optional.empty();
        assertThat(DerivedKeyClientFilter.resolve(Acquirer.class.getMethod("charge"), none))
                .isEqualTo(new DerivedKeyClientFilter.Purpose("acquirer.charge", "Idempotency-Key"));
        assertThat(DerivedKeyClientFilter.resolve(Acquirer.class.getMethod("refund"), none))
                .isEqualTo(new DerivedKeyClientFilter.Purpose("acquirer.refund", "X-Request-Key"));

        Map<String, String> configured = Map.of(
                "idempotency.client." + Unnamed.class.getName() + ".purpose", "ledger.post",
                "idempotency.client." + Unnamed.class.getName() + ".header", "Ledger-Key");
        assertThat(DerivedKeyClientFilter.resolve(Unnamed.class.getMethod("send"),
                key -> Optional.ofNullable(configured.get(key))))
                .isEqualTo(new DerivedKeyClientFilter.Purpose("ledger.post", "Ledger-Key"));
        assertThatThrownBy(() -> DerivedKeyClientFilter.resolve(Unnamed.class.getMethod("send"), none))
                .hasMessageContaining("IDEM-D018")
                .hasMessageContaining("idempotency.client." + Unnamed.class.getName() + ".purpose");
    }
}
