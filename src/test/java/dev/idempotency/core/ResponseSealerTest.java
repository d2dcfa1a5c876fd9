package dev.idempotency.core;

import dev.idempotency.spi.StoredResponse;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ResponseSealerTest {
    private static final byte[] KEY1 = new byte[32];
    private static final byte[] KEY2 = new byte[16];

    static {
        new SecureRandom().nextBytes(KEY1);
        new SecureRandom().nextBytes(KEY2);
    }

    private final StoredResponse plain = new StoredResponse(201, Map.of("Location", List.of("/p/1")),
            "{\"card\":\"4111111111111111\"}".getBytes(StandardCharsets.UTF_8), StoredResponse.PLAIN);

    @Test
    void sealedBodyHasNoPlaintextAndOpensToTheSameBytes() {
        ResponseSealer sealer = new ResponseSealer(Map.of("k1", KEY1), "k1", new SecureRandom());
        StoredResponse sealed = sealer.seal(plain, "scope-a");
        assertThat(sealed.bodyEncoding()).isEqualTo("aes-gcm:k1");
        assertThat(new String(sealed.body(), StandardCharsets.ISO_8859_1)).doesNotContain("4111");
        assertThat(sealer.open(sealed, "scope-a")).isEqualTo(plain);
    }

    @Test
    void oldKeysStillOpenAfterRotation() {
        StoredResponse sealedWithOld = new ResponseSealer(Map.of("k1", KEY1), "k1", new SecureRandom()).seal(plain, "s");
        ResponseSealer rotated = new ResponseSealer(Map.of("k1", KEY1, "k2", KEY2), "k2", new SecureRandom());
        assertThat(rotated.open(sealedWithOld, "s")).isEqualTo(plain);
        assertThat(rotated.seal(plain, "s").bodyEncoding()).isEqualTo("aes-gcm:k2");
    }

    @Test
    void aCiphertextMovedToAnotherRecordOrTamperedDoesNotOpen() {
        ResponseSealer sealer = new ResponseSealer(Map.of("k1", KEY1), "k1", new SecureRandom());
        StoredResponse sealed = sealer.seal(plain, "scope-a");
        assertThatThrownBy(() -> sealer.open(sealed, "scope-b")).isInstanceOf(IllegalStateException.class);
        byte[] body = sealed.body();
        body[body.length - 1] ^= 1;
        assertThatThrownBy(() -> sealer.open(sealed.withBody(body, sealed.bodyEncoding()), "scope-a"))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void anUnknownKeyIdIsAnErrorAndPlainBodiesPassThrough() {
        ResponseSealer sealer = new ResponseSealer(Map.of("k1", KEY1), "k1", new SecureRandom());
        assertThatThrownBy(() -> sealer.open(plain.withBody(new byte[40], "aes-gcm:gone"), "s"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("gone");
        assertThat(sealer.open(plain, "s")).isSameAs(plain);
        assertThatThrownBy(() -> new ResponseSealer(Map.of("k1", new byte[7]), "k1", new SecureRandom()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
