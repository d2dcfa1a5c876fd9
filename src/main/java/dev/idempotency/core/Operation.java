package dev.idempotency.core;

import dev.idempotency.Scope;
import dev.idempotency.spi.OutcomeResolver;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One request as the protocol sees it: whose operation, which request, under which policy.
 *
 * @param scope       tenant + principal + endpoint + key
 * @param scopeKey    the record's primary key ({@link ScopeDigest#of}), or, once the operation's record was found
 *                    under another accepted secret, that record's key
 * @param aliasKeys   the keys the record may have under the other accepted secrets ({@link ScopeDigest#keys});
 *                    empty outside a rotation
 * @param fingerprint the request's fingerprint
 * @param policy      the endpoint's policy
 * @param resolver    the application's resolver for this endpoint, when it has side effects
 */
public record Operation(Scope scope, String scopeKey, List<String> aliasKeys,
                        Fingerprinter.RequestFingerprint fingerprint, EndpointPolicy policy,
                        Optional<OutcomeResolver> resolver) {
    public Operation {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(scopeKey, "scopeKey");
        aliasKeys = List.copyOf(aliasKeys);
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(resolver, "resolver");
    }

    public static Operation of(ScopeDigest digest, Scope scope, Fingerprinter.RequestFingerprint fingerprint,
                               EndpointPolicy policy, Optional<OutcomeResolver> resolver) {
        List<String> keys = digest.keys(scope);
        return new Operation(scope, keys.get(0), keys.subList(1, keys.size()), fingerprint, policy, resolver);
    }

    /** Every key the operation's record may have: its own first, then the aliases. */
    public List<String> keys() {
        List<String> keys = new ArrayList<>(1 + aliasKeys.size());
        keys.add(scopeKey);
        keys.addAll(aliasKeys);
        return keys;
    }

    /** The same operation on the record found under {@code key}: every later change is made to that record. */
    public Operation on(String key) {
        if (key.equals(scopeKey)) {
            return this;
        }
        List<String> others = new ArrayList<>(keys());
        others.remove(key);
        return new Operation(scope, key, others, fingerprint, policy, resolver);
    }

    /** A downstream key for this operation ({@link ScopeDigest#derive}). */
    public String derive(String purpose) {
        return ScopeDigest.derive(scopeKey, purpose);
    }
}
