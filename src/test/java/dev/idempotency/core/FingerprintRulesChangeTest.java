package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.json.JacksonCanonicalJson;
import dev.idempotency.spi.StoredResponse;
import dev.idempotency.testing.Databases;
import dev.idempotency.testing.MutableClock;
import dev.idempotency.testing.PolicyBuilder;
import dev.idempotency.testing.StoreFixture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A change of an endpoint's fingerprint rules during a rolling upgrade: nodes with the old rules, the new ones,
 * and the new ones accepting the old, over one store (H2, real JTA). A retry must never become a 422 because
 * the node it reached fingerprints differently from the one that made the record.
 */
class FingerprintRulesChangeTest {
    private static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);
    // The old rules leave traceId out; the new ones leave out clientRef too, and default currency to EUR.
    private static final FingerprintRules OLD = new FingerprintRules(Set.of("traceId"), Map.of(), true,
            ApiVersionSource.NONE);
    private static final String BODY = "{\"amount\":100,\"currency\":\"EUR\",\"clientRef\":\"web-7\",\"traceId\":\"t1\"}";
    private final MutableClock clock = new MutableClock();
    private StoreFixture db;
    private IdempotencyProtocol protocol;
    private RequestPreparation preparation;

    @BeforeEach
    void setUp() {
        db = new StoreFixture(Databases.named("h2"), "idem_rules_test");
        protocol = new IdempotencyProtocol(db.store, db.transactions, clock, new SecureRandom(), e -> { }, 1);
        JacksonCanonicalJson json = new JacksonCanonicalJson();
        preparation = new RequestPreparation(KeyRules.defaults(), json, new Fingerprinter(SECRET, List.of(), json),
                StoreFixture.SCOPE_DIGEST, new DefaultScopeResolver(false, "acme", false), clock);
    }

    private static PolicyBuilder oldRules() {
        return PolicyBuilder.defaults().with(p -> p.ignoredFields = Set.of("traceId"));
    }

    private static PolicyBuilder newRules() {
        return PolicyBuilder.defaults().with(p -> {
            p.ignoredFields = Set.of("traceId", "clientRef");
            p.fieldDefaults = Map.of("currency", "\"EUR\"");
        });
    }

    private static PolicyBuilder newRulesAcceptingOld() {
        return newRules().with(p -> p.previousRules = Optional.of(OLD));
    }

    @Test
    void aRecordMadeUnderTheOldRulesIsReplayedByANodeWithTheNewOnesThatAcceptsThem() {
        finish(execute(oldRules(), "k1", BODY));
        assertThat(admit(newRulesAcceptingOld(), "k1", BODY)).isInstanceOf(Admission.Replay.class);
        // The new rules leave clientRef out, the old did not: under the old rules this is another request.
        assertThat(rejected(newRulesAcceptingOld(), "k1", BODY.replace("web-7", "app-9")).problem().type())
                .isEqualTo(ProblemType.FINGERPRINT_MISMATCH);
    }

    @Test
    void aRecordMadeUnderTheNewRulesIsReplayedByANodeWithTheOldOnesThatAcceptsThem() {
        // Step 1 of a change: the old rules in use, the new ones accepted.
        FingerprintRules newOnes = newRules().build().rules();
        finish(execute(newRules(), "k1", BODY));
        assertThat(admit(oldRules().with(p -> p.previousRules = Optional.of(newOnes)), "k1", BODY))
                .isInstanceOf(Admission.Replay.class);
        // Under the new rules clientRef does not count, so the same key with another clientRef is this request.
        assertThat(admit(oldRules().with(p -> p.previousRules = Optional.of(newOnes)), "k1",
                BODY.replace("web-7", "app-9"))).isInstanceOf(Admission.Replay.class);
    }

    @Test
    void rulesANodeDoesNotAcceptAreNeitherTheSameNorAnotherRequest() {
        finish(execute(oldRules(), "k1", BODY));
        IdempotencyException unknown = rejected(newRules(), "k1", BODY);
        assertThat(unknown.problem().type()).isEqualTo(ProblemType.FINGERPRINT_RULES_UNKNOWN);
        assertThat(unknown.problem().status()).as("not a 422: the client did nothing wrong").isEqualTo(409);
        assertThat(unknown.problem().retryAfterSeconds()).isPresent();
    }

    @Test
    void acceptedRulesEndAtTheirConfiguredInstant() {
        finish(execute(oldRules(), "k1", BODY));
        PolicyBuilder until = newRulesAcceptingOld().with(p -> p.previousRulesUntil = Optional.of(clock.instant()
                .plus(Duration.ofHours(1))));
        assertThat(admit(until, "k1", BODY)).isInstanceOf(Admission.Replay.class);
        clock.advance(Duration.ofHours(2));
        assertThat(rejected(until, "k1", BODY).problem().type()).isEqualTo(ProblemType.FINGERPRINT_RULES_UNKNOWN);
    }

    @Test
    void aRetryTakingOverAnAttemptStoresTheRulesOfItsNode() {
        Claim first = execute(oldRules(), "k1", BODY);
        assertThat(protocol.completion().release(first)).isTrue();
        Claim second = ((Admission.Execute) admit(newRulesAcceptingOld(), "k1", BODY)).claim();
        assertThat(second.attempt()).isEqualTo(2);
        finish(second);
        // Made under the new rules now: a node with them alone replays it.
        assertThat(admit(newRules(), "k1", BODY)).isInstanceOf(Admission.Replay.class);
    }

    @Test
    void theRulesIdNamesTheRulesWhateverTheirOrder() {
        FingerprintRules a = new FingerprintRules(Set.of("a", "b"), Map.of("x", "1", "y", "2"), true, ApiVersionSource.NONE);
        FingerprintRules b = new FingerprintRules(Set.of("b", "a"), Map.of("y", "2", "x", "1"), true, ApiVersionSource.NONE);
        assertThat(a.id()).isEqualTo(b.id()).matches("[0-9a-f]{8}");
        assertThat(new FingerprintRules(Set.of("a"), a.defaults(), true, ApiVersionSource.NONE).id()).isNotEqualTo(a.id());
        assertThat(new FingerprintRules(a.ignoredFields(), Map.of("x", "1"), true, ApiVersionSource.NONE).id())
                .isNotEqualTo(a.id());
        assertThat(new FingerprintRules(a.ignoredFields(), a.defaults(), false, ApiVersionSource.NONE).id())
                .isNotEqualTo(a.id());
        assertThat(new FingerprintRules(a.ignoredFields(), a.defaults(), true, ApiVersionSource.parse("header:X-Api"))
                .id()).isNotEqualTo(a.id());
        Operation op = prepare(oldRules(), "k1", BODY);
        assertThat(op.fingerprint().stored()).isEqualTo(op.fingerprint().value() + ":" + OLD.id());
    }

    private Operation prepare(PolicyBuilder policy, String key, String body) {
        return preparation.prepare(request(key, body), policy.build(), Optional.empty()).orElseThrow();
    }

    private Admission admit(PolicyBuilder policy, String key, String body) {
        return protocol.admission().admit(prepare(policy, key, body));
    }

    private Claim execute(PolicyBuilder policy, String key, String body) {
        Admission admission = admit(policy, key, body);
        assertThat(admission).isInstanceOf(Admission.Execute.class);
        return ((Admission.Execute) admission).claim();
    }

    private IdempotencyException rejected(PolicyBuilder policy, String key, String body) {
        Operation op = prepare(policy, key, body);
        try {
            throw new AssertionError("expected a rejection, got " + protocol.admission().admit(op));
        } catch (IdempotencyException e) {
            return e;
        }
    }

    private void finish(Claim claim) {
        assertThat(protocol.completion().finishAlone(claim, RecordStatus.SUCCEEDED, Optional.of(new StoredResponse(201,
                Map.of("Content-Type", List.of("application/json")), "{\"id\":\"p-1\"}".getBytes(StandardCharsets.UTF_8),
                StoredResponse.PLAIN)))).isTrue();
    }

    private static RequestPreparation.Incoming request(String key, String body) {
        return RequestPreparationTest.request("alice", Map.of("Idempotency-Key", key), body, "");
    }
}
