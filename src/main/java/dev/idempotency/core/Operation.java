package dev.idempotency.core;

import dev.idempotency.Scope;
import dev.idempotency.spi.OutcomeResolver;

import java.util.Objects;
import java.util.Optional;

/**
 * One request as the protocol sees it: whose operation, which request, under which policy.
 *
 * @param scope       tenant + principal + endpoint + key
 * @param scopeKey    the record's primary key ({@link ScopeDigest#of})
 * @param fingerprint the request's fingerprint
 * @param policy      the endpoint's policy
 * @param resolver    the application's resolver for this endpoint, when it has side effects
 */
public record Operation(Scope scope, String scopeKey, Fingerprinter.RequestFingerprint fingerprint,
                        EndpointPolicy policy, Optional<OutcomeResolver> resolver) {
    public Operation {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(scopeKey, "scopeKey");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(resolver, "resolver");
    }

    public static Operation of(Scope scope, Fingerprinter.RequestFingerprint fingerprint, EndpointPolicy policy,
                               Optional<OutcomeResolver> resolver) {
        return new Operation(scope, ScopeDigest.of(scope), fingerprint, policy, resolver);
    }

    /** A downstream key for this operation ({@link ScopeDigest#derive}). */
    public String derive(String purpose) {
        return ScopeDigest.derive(scopeKey, purpose);
    }
}
