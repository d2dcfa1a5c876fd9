package dev.idempotency.core;

import dev.idempotency.ResponseStorage;
import dev.idempotency.spi.OutcomeResolver;
import dev.idempotency.spi.Resolution;
import dev.idempotency.spi.TaskInput;
import dev.idempotency.testing.PolicyBuilder;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What an accepted operation keeps with its claim (docs/adr/0020): the layout read back as written, kept under the
 * endpoint's storage rules (sealed, or nothing at all), and which endpoints' operations another node runs again.
 */
class KeptRequestTest {
    private static final byte[] KEY = new byte[32];

    static {
        new SecureRandom().nextBytes(KEY);
    }

    private final KeptRequest kept = new KeptRequest("key-1", "POST", "/api/payments/async", "a=1",
            "application/json", "2026-01", "http://node-a/api/",
            "{\"card\":\"4111111111111111\",\"amount\":10}".getBytes(StandardCharsets.UTF_8), new byte[] {0, 0, 0, 1});
    private final OutcomeStorage storage = new OutcomeStorage(new ResponseSealer(Map.of("k1", KEY), "k1",
            new SecureRandom()), (body, redaction) -> Optional.of(body));

    @Test
    void whatIsKeptIsReadBackAsWrittenAndAnotherLayoutIsRefused() {
        assertThat(KeptRequest.decode(kept.encode())).isEqualTo(kept);
        assertThat(kept.toString()).doesNotContain("key-1").doesNotContain("4111");
        byte[] otherVersion = kept.encode();
        otherVersion[3] = 9;
        assertThatThrownBy(() -> KeptRequest.decode(otherVersion)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("layout version 9");
        assertThatThrownBy(() -> KeptRequest.decode(new byte[] {0, 0, 0, 1, 127, 0, 0, 0}))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void underEncryptedStorageTheInputIsSealedToItsRecordAndOpensOnlyThere() {
        TaskInput sealed = storage.inputForStorage(kept, PolicyBuilder.defaults().with(p -> {
            p.asynchronous = true;
            p.inFlight = dev.idempotency.InFlightPolicy.ACCEPTED;
            p.storage = ResponseStorage.ENCRYPTED;
        }).build(), "scope-a").orElseThrow();
        assertThat(sealed.encoding()).isEqualTo("aes-gcm:k1");
        assertThat(new String(sealed.data(), StandardCharsets.ISO_8859_1)).doesNotContain("4111").doesNotContain("key-1");
        assertThat(storage.openedInput(sealed, "scope-a")).isEqualTo(kept);
        assertThatThrownBy(() -> storage.openedInput(sealed, "scope-b")).isInstanceOf(IllegalStateException.class);

        TaskInput plain = storage.inputForStorage(kept, PolicyBuilder.defaults().with(KeptRequestTest::asynchronous).build(),
                "scope-a").orElseThrow();
        assertThat(plain.encoding()).isEqualTo("plain");
        assertThat(storage.openedInput(plain, "scope-a")).isEqualTo(kept);
    }

    @Test
    void minimalStorageAndRedactedFieldsKeepNothingAndTheirOperationsAreNotRunAgain() {
        var minimal = PolicyBuilder.defaults().with(p -> {
            p.asynchronous = true;
            p.inFlight = dev.idempotency.InFlightPolicy.ACCEPTED;
            p.storage = ResponseStorage.MINIMAL;
        }).build();
        var redacting = PolicyBuilder.defaults().with(p -> {
            p.asynchronous = true;
            p.inFlight = dev.idempotency.InFlightPolicy.ACCEPTED;
            p.redaction = new Redaction(List.of("card"), Redaction.Mode.MASK);
        }).build();
        assertThat(storage.inputForStorage(kept, minimal, "s")).isEmpty();
        assertThat(storage.inputForStorage(kept, redacting, "s")).isEmpty();
        assertThat(TaskResumption.whyNotResumed(minimal, Optional.empty())).get().asString().contains("minimal");
        assertThat(TaskResumption.whyNotResumed(redacting, Optional.empty())).get().asString().contains("redact-fields");
    }

    @Test
    void externalSideEffectsNeedAResolverAndOnlyAsynchronousEndpointsAreRunAgain() {
        var external = PolicyBuilder.defaults().with(p -> {
            p.asynchronous = true;
            p.inFlight = dev.idempotency.InFlightPolicy.ACCEPTED;
            p.externalSideEffects = true;
        }).build();
        OutcomeResolver resolver = new OutcomeResolver() {
            @Override
            public boolean handles(String endpoint) {
                return true;
            }

            @Override
            public Resolution resolve(dev.idempotency.spi.ResolutionRequest request) {
                return new Resolution.NotDone();
            }
        };
        assertThat(TaskResumption.whyNotResumed(external, Optional.empty())).get().asString()
                .contains("external side effects");
        assertThat(TaskResumption.whyNotResumed(external, Optional.of(resolver))).isEmpty();
        assertThat(TaskResumption.whyNotResumed(PolicyBuilder.defaults().build(), Optional.empty())).get().asString()
                .contains("not asynchronous");
        assertThat(TaskResumption.whyNotResumed(PolicyBuilder.defaults().with(KeptRequestTest::asynchronous).build(),
                Optional.empty())).isEmpty();
    }

    private static void asynchronous(PolicyBuilder p) {
        p.asynchronous = true;
        p.inFlight = dev.idempotency.InFlightPolicy.ACCEPTED;
    }
}
