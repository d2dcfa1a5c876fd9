package dev.idempotency.core;

import dev.idempotency.InFlightPolicy;
import dev.idempotency.KeySource;
import dev.idempotency.ResponseStorage;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Everything the protocol needs to know about one endpoint, resolved once at deployment from the
 * annotation and the configuration (most specific wins). Nothing here is {@code CONFIGURED} any more.
 *
 * @param endpoint                the endpoint name (part of the scope)
 * @param keySource               where the key comes from
 * @param keyName                 header name, or dotted body path
 * @param keyRequired             whether a request without a key is rejected
 * @param retention               how long finished records are kept
 * @param lease                   how long a claim protects its executor
 * @param inFlight                the answer to an in-flight duplicate
 * @param inFlightWait            for {@link InFlightPolicy#WAIT}: the longest wait
 * @param storage                 how the outcome is stored
 * @param replayWith              for {@link ResponseStorage#MINIMAL}: method rebuilding the body, or ""
 * @param finalOn                 exception types whose outcome is final
 * @param retryOn                 exception types that are retryable
 * @param externalSideEffects     whether an {@code OutcomeResolver} is asked before re-running
 * @param mismatchStatus          status for a key reused with another request (422 or 409)
 * @param ignoredFields           body fields left out of the fingerprint
 * @param fieldDefaults           body fields that mean a value when absent (path to JSON text)
 * @param maxInFlightPerPrincipal at most this many PROCESSING keys per principal (0: no limit)
 * @param maxKeysPerEndpoint      at most this many retained keys per principal and endpoint (0: no limit)
 * @param maxResponseBytes        the largest body kept for replay
 * @param replayedHeaders         response headers kept and replayed besides Location and Content-Type
 * @param retryAfterMax           the longest {@code Retry-After} promised to an in-flight duplicate
 * @param apiVersion              where the API version of a request is read for its fingerprint
 * @param statusPath              path of the status resource under the application's base URI (202 Location)
 * @param queryInFingerprint      whether the request's query string is part of its fingerprint
 * @param redaction               the response fields never stored
 * @param failOversize            whether a response over {@code maxResponseBytes} fails the operation (500,
 *                                rolled back) instead of being kept without its body
 * @param previousRules           fingerprint rules accepted besides {@link #rules()}: those before a change of
 *                                them, or those after it during its first rolling step
 * @param previousRulesUntil      when {@code previousRules} stop being accepted; empty: while configured
 * @param asynchronous            whether the method runs as a task after a 202
 * @param messages                for an endpoint that consumes messages (a message listener): its scope sources,
 *                                fingerprinted properties and delivery attempts; empty for requests
 * @param claimInTransaction      whether a new operation's claim is written in the business transaction (one
 *                                commit; nothing visible while it runs) rather than committed on its own first
 * @param cacheOutcomes           whether finished outcomes are kept in and replayed from the outcome cache (Redis)
 */
public record EndpointPolicy(String endpoint, KeySource keySource, String keyName, boolean keyRequired,
                             Duration retention, Duration lease, InFlightPolicy inFlight, Duration inFlightWait,
                             ResponseStorage storage, String replayWith,
                             List<Class<? extends Throwable>> finalOn, List<Class<? extends Throwable>> retryOn,
                             boolean externalSideEffects, int mismatchStatus, Set<String> ignoredFields,
                             Map<String, String> fieldDefaults, int maxInFlightPerPrincipal, int maxKeysPerEndpoint,
                             int maxResponseBytes, List<String> replayedHeaders, Duration retryAfterMax,
                             ApiVersionSource apiVersion, String statusPath, boolean queryInFingerprint,
                             Redaction redaction, boolean failOversize, Optional<FingerprintRules> previousRules,
                             Optional<Instant> previousRulesUntil, boolean asynchronous,
                             Optional<MessagePolicy> messages, boolean claimInTransaction, boolean cacheOutcomes) {
    public EndpointPolicy {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(apiVersion, "apiVersion");
        Objects.requireNonNull(statusPath, "statusPath");
        Objects.requireNonNull(redaction, "redaction");
        Objects.requireNonNull(previousRules, "previousRules");
        Objects.requireNonNull(previousRulesUntil, "previousRulesUntil");
        Objects.requireNonNull(messages, "messages");
        if (inFlight == InFlightPolicy.CONFIGURED || storage == ResponseStorage.CONFIGURED) {
            throw new IllegalArgumentException("a resolved policy has no CONFIGURED value");
        }
        if (asynchronous && inFlight != InFlightPolicy.ACCEPTED) {
            throw new IllegalArgumentException("an asynchronous endpoint answers duplicates with 202 (ACCEPTED)");
        }
        if (messages.isPresent() && (inFlight != InFlightPolicy.WAIT || asynchronous)) {
            throw new IllegalArgumentException("a message waits for an in-flight duplicate (WAIT) and runs where it is delivered");
        }
        if (claimInTransaction && (asynchronous || inFlight == InFlightPolicy.ACCEPTED || messages.isPresent())) {
            throw new IllegalArgumentException("a claim in the business transaction is never visible while it runs:"
                    + " no 202, no asynchronous task, no message listener");
        }
        if (retention.isNegative() || retention.isZero() || lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException("retention and lease must be positive");
        }
        if (mismatchStatus != 409 && mismatchStatus != 422) {
            throw new IllegalArgumentException("mismatch status must be 409 or 422");
        }
        finalOn = List.copyOf(finalOn);
        retryOn = List.copyOf(retryOn);
        ignoredFields = Set.copyOf(ignoredFields);
        fieldDefaults = Map.copyOf(fieldDefaults);
        replayedHeaders = List.copyOf(replayedHeaders);
    }

    /**
     * For a claim in the business transaction: how long a duplicate waits on the first's uncommitted claim, in
     * whole seconds (what JDBC's query timeout takes), at least one.
     */
    public int claimWaitSeconds() {
        long seconds = inFlightWait.toSeconds() + (inFlightWait.toNanosPart() > 0 ? 1 : 0);
        return (int) Math.max(1, seconds);
    }

    /** The rules the endpoint's fingerprints are made under now. */
    public FingerprintRules rules() {
        return new FingerprintRules(ignoredFields, fieldDefaults, queryInFingerprint, apiVersion);
    }

    /** The other rules a stored fingerprint may name and still be compared under, at {@code now}. */
    public Optional<FingerprintRules> acceptedRules(Instant now) {
        return previousRules.filter(rules -> previousRulesUntil.map(now::isBefore).orElse(true))
                .filter(rules -> !rules.id().equals(rules().id()));
    }

    /** How a thrown exception counts, by the configured types; empty when neither list names it. */
    public java.util.Optional<Boolean> isRetryable(Throwable thrown) {
        for (Class<? extends Throwable> type : retryOn) {
            if (type.isInstance(thrown)) {
                return java.util.Optional.of(true);
            }
        }
        for (Class<? extends Throwable> type : finalOn) {
            if (type.isInstance(thrown)) {
                return java.util.Optional.of(false);
            }
        }
        return java.util.Optional.empty();
    }
}
