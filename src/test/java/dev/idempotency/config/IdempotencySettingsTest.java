package dev.idempotency.config;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyDefinitionException;
import dev.idempotency.InFlightPolicy;
import dev.idempotency.ResponseStorage;
import dev.idempotency.core.EndpointPolicy;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class IdempotencySettingsTest {
    private static final String SECRET = "a-secret-of-at-least-thirty-two-bytes!";

    @Idempotent
    void defaults() {
    }

    @Idempotent(lease = "PT10S", retention = "P30D", inFlight = InFlightPolicy.TOO_EARLY, storage = ResponseStorage.MINIMAL)
    void annotated() {
    }

    @Idempotent(keySource = dev.idempotency.KeySource.MESSAGE_PROPERTY, inFlight = InFlightPolicy.CONFLICT)
    void listener() {
    }

    @Test
    void aMessageEndpointWaitsForItsDuplicatesReadsItsScopeAsConfiguredAndIsLimitedOnlyWhereSetForIt() {
        EndpointPolicy policy = settings(Map.of("idempotency.max-keys-per-endpoint", "50",
                "idempotency.endpoints.commands.message.principal", "property:merchantId",
                "idempotency.message.fingerprint-properties", "commandType, version",
                "idempotency.endpoints.commands.max-in-flight-per-principal", "7"))
                .policyFor("commands", annotation("listener"), true);
        assertThat(policy.keyName()).isEqualTo("IdempotencyKey");
        assertThat(policy.inFlight()).as("whatever the annotation says").isEqualTo(InFlightPolicy.WAIT);
        assertThat(policy.maxKeysPerEndpoint()).as("the requests' global limit is not a message's").isZero();
        assertThat(policy.maxInFlightPerPrincipal()).isEqualTo(7);
        dev.idempotency.core.MessagePolicy messages = policy.messages().orElseThrow();
        assertThat(messages.principal()).isEqualTo(new dev.idempotency.core.ScopeSource(true, "merchantId"));
        assertThat(messages.tenant()).isEqualTo(dev.idempotency.core.ScopeSource.constant(""));
        assertThat(messages.fingerprintProperties()).containsExactly("commandType", "version");
        assertThat(messages.maxDeliveries()).isEqualTo(10);
        assertThatThrownBy(() -> settings(Map.of("idempotency.message.tenant", "header:X-Tenant"))
                .policyFor("commands", annotation("listener"), true))
                .isInstanceOf(IdempotencyDefinitionException.class).hasMessageContaining("IDEM-C001")
                .hasMessageContaining("idempotency.message.tenant");
        assertThatThrownBy(() -> settings(Map.of("idempotency.endpoints.commands.message.max-deliveries", "0"))
                .policyFor("commands", annotation("listener"), true))
                .isInstanceOf(IdempotencyDefinitionException.class)
                .hasMessageContaining("idempotency.endpoints.commands.message.max-deliveries");
    }

    @Test
    void withoutASecretTheDeploymentFailsUnlessTheDevelopmentSwitchIsSet() {
        assertThatThrownBy(() -> new IdempotencySettings(source(Map.of())))
                .isInstanceOf(IdempotencyDefinitionException.class)
                .hasMessageContaining("IDEM-C002").hasMessageContaining("idempotency.secret");
        IdempotencySettings dev = new IdempotencySettings(source(Map.of("idempotency.insecure-development-secret", "true")));
        assertThat(dev.usesDevelopmentSecret()).isTrue();
        assertThat(new IdempotencySettings(source(Map.of("idempotency.secret", SECRET))).usesDevelopmentSecret()).isFalse();
    }

    @Test
    void aShortSecretIsRejectedWithoutEchoingIt() {
        assertThatThrownBy(() -> new IdempotencySettings(source(Map.of("idempotency.secret", "short-secret"))))
                .isInstanceOf(IdempotencyDefinitionException.class)
                .hasMessageContaining("IDEM-C001").hasMessageContaining("32 bytes").hasMessageNotContaining("short-secret");
    }

    @Test
    void theDefaultsAreTheDocumentedOnes() {
        EndpointPolicy policy = settings(Map.of()).policyFor("payments", annotation("defaults"));
        assertThat(policy.keyName()).isEqualTo("Idempotency-Key");
        assertThat(policy.retention()).isEqualTo(Duration.ofHours(24));
        assertThat(policy.lease()).isEqualTo(Duration.ofSeconds(30));
        assertThat(policy.inFlight()).isEqualTo(InFlightPolicy.CONFLICT);
        assertThat(policy.storage()).isEqualTo(ResponseStorage.FULL);
        assertThat(policy.mismatchStatus()).isEqualTo(422);
        assertThat(policy.maxInFlightPerPrincipal()).isEqualTo(100);
        assertThat(policy.maxKeysPerEndpoint()).isEqualTo(10_000);
        assertThat(settings(Map.of()).datasource()).isEqualTo("java:comp/DefaultDataSource");
    }

    @Test
    void theMostSpecificValueWins() {
        Map<String, String> config = Map.of(
                "idempotency.lease", "PT1M",
                "idempotency.retention", "PT48H",
                "idempotency.endpoints.payments.lease", "PT5S",
                "idempotency.in-flight", "accepted",
                "idempotency.endpoints.payments.mismatch-status", "409");
        EndpointPolicy annotated = settings(config).policyFor("payments", annotation("annotated"));
        assertThat(annotated.lease()).as("endpoint key over annotation").isEqualTo(Duration.ofSeconds(5));
        assertThat(annotated.retention()).as("annotation over global").isEqualTo(Duration.ofDays(30));
        assertThat(annotated.inFlight()).as("annotation over global").isEqualTo(InFlightPolicy.TOO_EARLY);
        assertThat(annotated.mismatchStatus()).isEqualTo(409);
        EndpointPolicy plain = settings(config).policyFor("refunds", annotation("defaults"));
        assertThat(plain.lease()).as("global over default").isEqualTo(Duration.ofMinutes(1));
        assertThat(plain.inFlight()).isEqualTo(InFlightPolicy.ACCEPTED);
        assertThat(plain.mismatchStatus()).isEqualTo(422);
    }

    @Test
    void invalidValuesFailNamingTheirKey() {
        assertInvalid(Map.of("idempotency.lease", "30 seconds"), "idempotency.lease");
        assertInvalid(Map.of("idempotency.endpoints.payments.lease", "PT0S"), "idempotency.endpoints.payments.lease");
        assertInvalid(Map.of("idempotency.in-flight", "sometimes"), "idempotency.in-flight");
        assertInvalid(Map.of("idempotency.mismatch-status", "418"), "idempotency.mismatch-status");
        assertInvalid(Map.of("idempotency.in-flight-wait", "PT1M"), "idempotency.in-flight-wait");
        assertInvalid(Map.of("idempotency.replayed-headers", "Set-Cookie"), "idempotency.replayed-headers");
        assertInvalid(Map.of("idempotency.fingerprint.defaults", "currency=EUR"), "idempotency.fingerprint.defaults");
        assertInvalid(Map.of("idempotency.storage", "encrypted"), "idempotency.encryption.keys");
        assertInvalid(Map.of("idempotency.fingerprint.query", "sometimes"), "idempotency.fingerprint.query");
        assertInvalid(Map.of("idempotency.endpoints.payments.redact-fields", "card..number"),
                "idempotency.endpoints.payments.redact-fields");
        assertInvalid(Map.of("idempotency.redact-fields", "items[0].cvv"), "idempotency.redact-fields");
        assertInvalid(Map.of("idempotency.redact-mode", "hash"), "idempotency.redact-mode");
        assertInvalid(Map.of("idempotency.oversize-response", "truncate"), "idempotency.oversize-response");
        assertInvalid(Map.of("idempotency.endpoints.payments.api-version", "query:v"),
                "idempotency.endpoints.payments.api-version");
        assertInvalidAtStart(Map.of("idempotency.table", "records; drop table x"), "idempotency.table");
        assertInvalidAtStart(Map.of("idempotency.key-max-length", "2000"), "idempotency.key-max-length");
        assertInvalidAtStart(Map.of("idempotency.key-pattern", "[unclosed"), "idempotency.key-pattern");
        assertInvalidAtStart(Map.of("idempotency.tenant", "from-somewhere"), "idempotency.tenant");
        assertInvalidAtStart(Map.of("idempotency.anonymous", "maybe"), "idempotency.anonymous");
        assertInvalidAtStart(Map.of("idempotency.purge.batch-size", "0"), "idempotency.purge.batch-size");
        assertInvalidAtStart(Map.of("idempotency.encryption.keys", "k1:not-base64!"), "idempotency.encryption.keys");
        assertInvalidAtStart(Map.of("idempotency.encryption.keys", "k1:AAAA", "idempotency.encryption.active-key", "k1"),
                "idempotency.encryption.keys");
        assertInvalidAtStart(Map.of("idempotency.problem-base", "https://x.test/problems"), "idempotency.problem-base");
    }

    @Test
    void encryptionKeysRotateByActiveId() {
        String k1 = java.util.Base64.getEncoder().encodeToString(new byte[32]);
        String k2 = java.util.Base64.getEncoder().encodeToString(new byte[16]);
        IdempotencySettings s = settings(Map.of("idempotency.encryption.keys", "k1:" + k1 + ",k2:" + k2,
                "idempotency.encryption.active-key", "k2"));
        assertThat(s.encryptionKeys()).containsOnlyKeys("k1", "k2");
        assertThat(s.activeEncryptionKey()).isEqualTo("k2");
        assertThat(s.policyFor("payments", annotation("defaults")).storage()).isEqualTo(ResponseStorage.FULL);
    }

    @Test
    void previousSecretsAreKeptForMatching() {
        IdempotencySettings s = settings(Map.of("idempotency.previous-secrets", "older-secret-of-thirty-two-bytes-xx"));
        assertThat(s.previousSecrets()).hasSize(1);
    }

    @Test
    void previousFingerprintRulesAreTheCurrentOnesChangedByEachPreviousSettingConfigured() {
        EndpointPolicy none = settings(Map.of("idempotency.fingerprint.ignore-fields", "traceId"))
                .policyFor("payments", annotation("defaults"));
        assertThat(none.previousRules()).isEmpty();
        assertThat(none.acceptedRules(java.time.Instant.now())).isEmpty();

        EndpointPolicy changed = settings(Map.of("idempotency.fingerprint.ignore-fields", "traceId,clientRef",
                "idempotency.fingerprint.defaults", "currency=\"EUR\"",
                "idempotency.endpoints.payments.fingerprint.previous.ignore-fields", "traceId",
                "idempotency.fingerprint.previous.until", "2030-01-01T00:00:00Z"))
                .policyFor("payments", annotation("defaults"));
        dev.idempotency.core.FingerprintRules previous = changed.previousRules().orElseThrow();
        assertThat(previous.ignoredFields()).containsExactly("traceId");
        assertThat(previous.defaults()).as("not configured: as now").containsEntry("currency", "\"EUR\"");
        assertThat(previous.query()).isTrue();
        assertThat(changed.previousRulesUntil()).contains(java.time.Instant.parse("2030-01-01T00:00:00Z"));
        assertThat(changed.acceptedRules(java.time.Instant.parse("2029-12-31T23:59:59Z"))).contains(previous);
        assertThat(changed.acceptedRules(java.time.Instant.parse("2030-01-01T00:00:00Z"))).isEmpty();

        assertInvalid(Map.of("idempotency.fingerprint.previous.until", "tomorrow"), "idempotency.fingerprint.previous.until");
        assertInvalid(Map.of("idempotency.fingerprint.previous.query", "sometimes"), "idempotency.fingerprint.previous.query");
        assertInvalid(Map.of("idempotency.fingerprint.previous.api-version", "cookie:v"),
                "idempotency.fingerprint.previous.api-version");
    }

    @Test
    void theTablesAreValidatedUnlessMigrationIsAskedForUnderEitherName() {
        assertThat(settings(Map.of()).schema()).isEqualTo(IdempotencySettings.SchemaHandling.VALIDATE);
        assertThat(settings(Map.of("idempotency.schema", "migrate")).schema())
                .isEqualTo(IdempotencySettings.SchemaHandling.MIGRATE);
        assertThat(settings(Map.of("idempotency.schema", "create")).schema())
                .isEqualTo(IdempotencySettings.SchemaHandling.MIGRATE);
        assertThat(settings(Map.of("idempotency.schema", "None")).schema())
                .isEqualTo(IdempotencySettings.SchemaHandling.NONE);
        assertThat(settings(Map.of("idempotency.create-schema", "true")).schema())
                .isEqualTo(IdempotencySettings.SchemaHandling.MIGRATE);
        assertThat(settings(Map.of("idempotency.create-schema", "true", "idempotency.schema", "create")).schema())
                .isEqualTo(IdempotencySettings.SchemaHandling.MIGRATE);
        assertThat(settings(Map.of("idempotency.create-schema", "false", "idempotency.schema", "none")).schema())
                .isEqualTo(IdempotencySettings.SchemaHandling.NONE);
        assertInvalidAtStart(Map.of("idempotency.schema", "upgrade"), "idempotency.schema");
        assertInvalidAtStart(Map.of("idempotency.create-schema", "true", "idempotency.schema", "validate"),
                "idempotency.create-schema");
    }

    private static void assertInvalid(Map<String, String> config, String key) {
        assertThatThrownBy(() -> settings(config).policyFor("payments", annotation("defaults")))
                .isInstanceOf(IdempotencyDefinitionException.class).hasMessageContaining(key);
    }

    private static void assertInvalidAtStart(Map<String, String> config, String key) {
        assertThatThrownBy(() -> settings(config)).isInstanceOf(IdempotencyDefinitionException.class)
                .hasMessageContaining("IDEM-C001").hasMessageContaining(key);
    }

    private static IdempotencySettings settings(Map<String, String> config) {
        Map<String, String> all = new HashMap<>(config);
        all.putIfAbsent("idempotency.secret", SECRET);
        return new IdempotencySettings(source(all));
    }

    private static SettingsSource source(Map<String, String> values) {
        return key -> Optional.ofNullable(values.get(key));
    }

    private static Idempotent annotation(String method) {
        try {
            return IdempotencySettingsTest.class.getDeclaredMethod(method).getAnnotation(Idempotent.class);
        } catch (NoSuchMethodException e) {
            throw new AssertionError(e);
        }
    }
}
