package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.KeySource;
import dev.idempotency.ProblemType;
import dev.idempotency.json.JacksonCanonicalJson;
import dev.idempotency.testing.PolicyBuilder;
import dev.idempotency.testing.StoreFixture;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Key, scope and fingerprint from what an adapter captured, without any container. */
class RequestPreparationTest {
    private final RequestPreparation preparation = new RequestPreparation(KeyRules.defaults(), new JacksonCanonicalJson(),
            new Fingerprinter("0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8), List.of(),
                    new JacksonCanonicalJson()), StoreFixture.SCOPE_DIGEST, new DefaultScopeResolver(false, "acme", false),
            java.time.Clock.systemUTC());
    private final EndpointPolicy header = PolicyBuilder.defaults().build();

    @Test
    void theSameKeyOfAnotherCallerIsAnotherOperation() {
        Operation alice = preparation.prepare(request("alice", Map.of("Idempotency-Key", "k-1"), "{\"a\":1}"), header,
                Optional.empty()).orElseThrow();
        Operation bob = preparation.prepare(request("bob", Map.of("Idempotency-Key", "k-1"), "{\"a\":1}"), header,
                Optional.empty()).orElseThrow();
        assertThat(alice.scope().key()).isEqualTo("k-1");
        assertThat(alice.scope().principal()).isEqualTo("alice");
        assertThat(alice.scopeKey()).isNotEqualTo(bob.scopeKey());
        assertThat(alice.fingerprint().value()).isNotEqualTo(bob.fingerprint().value());
    }

    @Test
    void aRespelledBodyIsTheSameRequest() {
        Operation first = preparation.prepare(request("alice", Map.of("Idempotency-Key", "k"), "{\"a\":100,\"b\":\"x\"}"),
                header, Optional.empty()).orElseThrow();
        Operation again = preparation.prepare(request("alice", Map.of("Idempotency-Key", "k"), "{ \"b\":\"x\", \"a\":1E2 }"),
                header, Optional.empty()).orElseThrow();
        assertThat(again.fingerprint().matches(first.fingerprint().value())).isTrue();
    }

    // POST /transfers?dryRun=true and POST /transfers with one key are two requests (design guide §3).
    @Test
    void theQueryStringIsPartOfTheFingerprintUnlessTheEndpointLeavesItOut() {
        Map<String, String> key = Map.of("Idempotency-Key", "k");
        String plain = preparation.prepare(request("alice", key, "{}"), header, Optional.empty()).orElseThrow()
                .fingerprint().value();
        Fingerprinter.RequestFingerprint dryRun = preparation.prepare(request("alice", key, "{}", "dryRun=true&x=1"),
                header, Optional.empty()).orElseThrow().fingerprint();
        assertThat(dryRun.matches(plain)).isFalse();
        assertThat(preparation.prepare(request("alice", key, "{}", "x=%31&dryRun=true"), header, Optional.empty())
                .orElseThrow().fingerprint().matches(dryRun.value())).as("the same parameters, respelled").isTrue();

        EndpointPolicy ignoring = PolicyBuilder.defaults().with(p -> p.queryInFingerprint = false).build();
        assertThat(preparation.prepare(request("alice", key, "{}", "dryRun=true"), ignoring, Optional.empty())
                .orElseThrow().fingerprint().matches(plain)).isTrue();
    }

    @Test
    void aMissingKeyIsRejectedOnlyWhereItIsRequired() {
        assertThatThrownBy(() -> preparation.prepare(request("alice", Map.of(), "{}"), header, Optional.empty()))
                .isInstanceOfSatisfying(IdempotencyException.class,
                        e -> assertThat(e.problem().type()).isEqualTo(ProblemType.KEY_MISSING));
        EndpointPolicy optional = withKey(header, KeySource.HEADER, "Idempotency-Key", false);
        assertThat(preparation.prepare(request("alice", Map.of(), "{}"), optional, Optional.empty())).isEmpty();
    }

    @Test
    void aBodyFieldKeyNeedsAWellFormedBody() {
        EndpointPolicy bodyField = withKey(header, KeySource.BODY_FIELD, "merchantOrderNo", true);
        assertThat(preparation.prepare(request("alice", Map.of(), "{\"merchantOrderNo\":\"A-1\"}"), bodyField,
                Optional.empty()).orElseThrow().scope().key()).isEqualTo("A-1");
        assertThatThrownBy(() -> preparation.prepare(request("alice", Map.of(), "{\"merchantOrderNo\":"), bodyField,
                Optional.empty()))
                .isInstanceOfSatisfying(IdempotencyException.class,
                        e -> assertThat(e.problem().type()).isEqualTo(ProblemType.BODY_MALFORMED));
    }

    private static EndpointPolicy withKey(EndpointPolicy p, KeySource source, String name, boolean required) {
        return new EndpointPolicy(p.endpoint(), source, name, required, p.retention(), p.lease(), p.inFlight(),
                p.inFlightWait(), p.storage(), p.replayWith(), p.finalOn(), p.retryOn(), p.externalSideEffects(),
                p.mismatchStatus(), p.ignoredFields(), p.fieldDefaults(), p.maxInFlightPerPrincipal(),
                p.maxKeysPerEndpoint(), p.maxResponseBytes(), p.replayedHeaders(), p.retryAfterMax(), p.apiVersion(),
                p.statusPath(), p.queryInFingerprint(), p.redaction(), p.failOversize(), p.previousRules(),
                p.previousRulesUntil(), p.asynchronous(), p.messages(),
                p.claimInTransaction(), p.cacheOutcomes());
    }

    private static RequestPreparation.Incoming request(String principal, Map<String, String> headers, String body) {
        return request(principal, headers, body, "");
    }

    /** A POST to /api/payments as an adapter captures it (also for the other tests of request preparation). */
    static RequestPreparation.Incoming request(String principal, Map<String, String> headers, String body,
                                               String query) {
        return new RequestPreparation.Incoming() {
            @Override
            public String method() {
                return "POST";
            }

            @Override
            public String path() {
                return "/api/payments";
            }

            @Override
            public String query() {
                return query;
            }

            @Override
            public String contentType() {
                return "application/json";
            }

            @Override
            public List<String> header(String name) {
                return headers.containsKey(name) ? List.of(headers.get(name)) : List.of();
            }

            @Override
            public byte[] body() {
                return body.getBytes(StandardCharsets.UTF_8);
            }

            @Override
            public Optional<String> principalName() {
                return Optional.of(principal);
            }

            @Override
            public boolean isUserInRole(String role) {
                return false;
            }
        };
    }
}
