package dev.idempotency.core;

import dev.idempotency.Scope;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ScopeDigestTest {

    @Test
    void isFixedLengthHexWhateverTheKeyLength() {
        assertThat(ScopeDigest.of(new Scope("t", "u", "e", "k"))).matches("[0-9a-f]{64}");
        assertThat(ScopeDigest.of(new Scope("t", "u", "e", "k".repeat(1024)))).hasSize(64);
    }

    @Test
    void everyPartOfTheScopeSeparatesOperations() {
        String base = ScopeDigest.of(new Scope("acme", "alice", "payments", "k1"));
        assertThat(ScopeDigest.of(new Scope("globex", "alice", "payments", "k1"))).isNotEqualTo(base);
        assertThat(ScopeDigest.of(new Scope("acme", "bob", "payments", "k1"))).isNotEqualTo(base);
        assertThat(ScopeDigest.of(new Scope("acme", "alice", "refunds", "k1"))).isNotEqualTo(base);
        assertThat(ScopeDigest.of(new Scope("acme", "alice", "payments", "k2"))).isNotEqualTo(base);
        assertThat(ScopeDigest.of(new Scope("acme", "alice", "payments", "k1"))).isEqualTo(base);
    }

    @Test
    void partsCannotBeShiftedIntoEachOther() {
        assertThat(ScopeDigest.of(new Scope("ab", "c", "e", "k"))).isNotEqualTo(ScopeDigest.of(new Scope("a", "bc", "e", "k")));
    }

    @Test
    void derivedKeysAreStablePerPurposeAndRevealNothing() {
        String scopeKey = ScopeDigest.of(new Scope("acme", "alice", "payments", "secret-key"));
        String charge = ScopeDigest.derive(scopeKey, "acquirer.charge");
        assertThat(ScopeDigest.derive(scopeKey, "acquirer.charge")).isEqualTo(charge);
        assertThat(ScopeDigest.derive(scopeKey, "acquirer.refund")).isNotEqualTo(charge);
        assertThat(charge).matches("[A-Za-z0-9_-]{43}").doesNotContain("secret-key").doesNotContain("alice");
        assertThatThrownBy(() -> ScopeDigest.derive(scopeKey, " ")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void scopeToStringKeepsTheKeyOutOfLogs() {
        assertThat(new Scope("acme", "alice", "payments", "very-secret-key").toString()).doesNotContain("very-secret-key");
    }
}
