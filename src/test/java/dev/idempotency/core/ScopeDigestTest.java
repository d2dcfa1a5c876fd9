package dev.idempotency.core;

import dev.idempotency.Scope;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ScopeDigestTest {
    private static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);
    private static final byte[] OLD_SECRET = "fedcba9876543210fedcba9876543210".getBytes(StandardCharsets.UTF_8);
    private static final ScopeDigest DIGEST = new ScopeDigest(SECRET, List.of());

    @Test
    void isFixedLengthHexWhateverTheKeyLength() {
        assertThat(DIGEST.of(new Scope("t", "u", "e", "k"))).matches("[0-9a-f]{64}");
        assertThat(DIGEST.of(new Scope("t", "u", "e", "k".repeat(1024)))).hasSize(64);
    }

    @Test
    void everyPartOfTheScopeSeparatesOperations() {
        String base = DIGEST.of(new Scope("acme", "alice", "payments", "k1"));
        assertThat(DIGEST.of(new Scope("globex", "alice", "payments", "k1"))).isNotEqualTo(base);
        assertThat(DIGEST.of(new Scope("acme", "bob", "payments", "k1"))).isNotEqualTo(base);
        assertThat(DIGEST.of(new Scope("acme", "alice", "refunds", "k1"))).isNotEqualTo(base);
        assertThat(DIGEST.of(new Scope("acme", "alice", "payments", "k2"))).isNotEqualTo(base);
        assertThat(DIGEST.of(new Scope("acme", "alice", "payments", "k1"))).isEqualTo(base);
    }

    @Test
    void partsCannotBeShiftedIntoEachOther() {
        assertThat(DIGEST.of(new Scope("ab", "c", "e", "k"))).isNotEqualTo(DIGEST.of(new Scope("a", "bc", "e", "k")));
    }

    @Test
    void derivedKeysAreStablePerPurposeAndRevealNothing() {
        String scopeKey = DIGEST.of(new Scope("acme", "alice", "payments", "secret-key"));
        String charge = ScopeDigest.derive(scopeKey, "acquirer.charge");
        assertThat(ScopeDigest.derive(scopeKey, "acquirer.charge")).isEqualTo(charge);
        assertThat(ScopeDigest.derive(scopeKey, "acquirer.refund")).isNotEqualTo(charge);
        assertThat(charge).matches("[A-Za-z0-9_-]{43}").doesNotContain("secret-key").doesNotContain("alice");
        assertThatThrownBy(() -> ScopeDigest.derive(scopeKey, " ")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theDigestIsKeyedSoThatAGuessedKeyCannotBeConfirmedWithoutTheSecret() throws Exception {
        Scope scope = new Scope("acme", "alice", "payments", "merchant-order-4711");
        // What anyone who reads the table could compute from a guess if the digest were a bare hash.
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        for (String part : List.of("scope-v2", "acme", "alice", "payments", "merchant-order-4711")) {
            byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
            sha.update(ScopeDigest.lengthPrefix(bytes.length));
            sha.update(bytes);
        }
        assertThat(DIGEST.of(scope)).isNotEqualTo(HexFormat.of().formatHex(sha.digest()))
                .isNotEqualTo(new ScopeDigest(OLD_SECRET, List.of()).of(scope));
        assertThatThrownBy(() -> new ScopeDigest(new byte[31], List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void duringARotationTheRecordsOfTheOtherAcceptedSecretsStayFindable() {
        Scope scope = new Scope("acme", "alice", "payments", "k1");
        String before = new ScopeDigest(OLD_SECRET, List.of()).of(scope);
        ScopeDigest rotated = new ScopeDigest(SECRET, List.of(OLD_SECRET));
        assertThat(rotated.keys(scope)).containsExactly(DIGEST.of(scope), before);
        assertThat(rotated.of(scope)).isEqualTo(DIGEST.of(scope));
        assertThat(new ScopeDigest(SECRET, List.of(SECRET)).keys(scope)).as("the same secret twice is one key")
                .containsExactly(DIGEST.of(scope));
    }

    @Test
    void scopeToStringKeepsTheKeyOutOfLogs() {
        assertThat(new Scope("acme", "alice", "payments", "very-secret-key").toString()).doesNotContain("very-secret-key");
    }
}
