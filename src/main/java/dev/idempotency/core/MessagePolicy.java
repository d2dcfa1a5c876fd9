package dev.idempotency.core;

import java.util.List;
import java.util.Objects;

/**
 * What an endpoint that consumes messages needs besides the rest of its {@link EndpointPolicy}.
 *
 * @param tenant                where a message's tenant comes from
 * @param principal             where a message's principal comes from (there is no authenticated caller)
 * @param fingerprintProperties message properties that are part of its fingerprint besides its body, in the
 *                              part a request's query has
 * @param maxDeliveries         the broker's delivery attempts for the endpoint's destination: a retryable failure
 *                              of the last one is recorded as dead-lettered
 */
public record MessagePolicy(ScopeSource tenant, ScopeSource principal, List<String> fingerprintProperties,
                            int maxDeliveries) {
    public MessagePolicy {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(principal, "principal");
        fingerprintProperties = List.copyOf(fingerprintProperties);
        if (maxDeliveries < 1) {
            throw new IllegalArgumentException("a message is delivered at least once");
        }
    }
}
