package dev.idempotency.testing;

import dev.idempotency.InFlightPolicy;
import dev.idempotency.KeySource;
import dev.idempotency.ResponseStorage;
import dev.idempotency.core.EndpointPolicy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** An {@link EndpointPolicy} with the library's defaults, changed one setting at a time. */
public final class PolicyBuilder {
    public String endpoint = "payments.create";
    public Duration retention = Duration.ofHours(24);
    public Duration lease = Duration.ofSeconds(30);
    public InFlightPolicy inFlight = InFlightPolicy.CONFLICT;
    public Duration inFlightWait = Duration.ofSeconds(2);
    public ResponseStorage storage = ResponseStorage.FULL;
    public boolean externalSideEffects;
    public int mismatchStatus = 422;
    public int maxInFlight = 100;
    public int maxKeys = 10_000;
    public Duration retryAfterMax = Duration.ofSeconds(5);
    public boolean queryInFingerprint = true;
    public Set<String> ignoredFields = Set.of("traceId");
    public Map<String, String> fieldDefaults = Map.of();
    public java.util.Optional<dev.idempotency.core.FingerprintRules> previousRules = java.util.Optional.empty();
    public java.util.Optional<java.time.Instant> previousRulesUntil = java.util.Optional.empty();
    public boolean asynchronous;
    public KeySource keySource = KeySource.HEADER;
    public String keyName = "Idempotency-Key";
    public java.util.Optional<dev.idempotency.core.MessagePolicy> messages = java.util.Optional.empty();
    public boolean claimInTransaction;
    public boolean cacheOutcomes;
    public dev.idempotency.core.Redaction redaction = dev.idempotency.core.Redaction.NONE;

    /** An endpoint that consumes messages: it waits for an in-flight duplicate, as every message endpoint does. */
    public PolicyBuilder consumingMessages(dev.idempotency.core.MessagePolicy policy, KeySource source, String name) {
        messages = java.util.Optional.of(policy);
        inFlight = InFlightPolicy.WAIT;
        keySource = source;
        keyName = name;
        return this;
    }

    public static PolicyBuilder defaults() {
        return new PolicyBuilder();
    }

    public PolicyBuilder with(java.util.function.Consumer<PolicyBuilder> change) {
        change.accept(this);
        return this;
    }

    public EndpointPolicy build() {
        return new EndpointPolicy(endpoint, keySource, keyName, true, retention, lease, inFlight,
                inFlightWait, storage, "", List.of(), List.of(), externalSideEffects, mismatchStatus,
                ignoredFields, fieldDefaults, maxInFlight, maxKeys, 1 << 20, List.of(), retryAfterMax,
                dev.idempotency.core.ApiVersionSource.NONE, "idempotency", queryInFingerprint,
                redaction, false, previousRules, previousRulesUntil, asynchronous,
                messages, claimInTransaction, cacheOutcomes);
    }
}
