package dev.idempotency.spi;

import dev.idempotency.RecordStatus;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One row of the idempotency table: the source of truth for an operation.
 *
 * @param scopeKey    fixed-length digest of tenant + principal + endpoint + key; the primary key
 * @param tenant      scope column, for quotas and queries
 * @param principal   scope column
 * @param endpoint    scope column
 * @param requestHash versioned request fingerprint ({@code v1:...})
 * @param status      state
 * @param resourceId  id of the created resource, when known
 * @param response    the stored outcome (finished states)
 * @param ownerToken  unguessable token of the current executor; every state change is conditional on it
 * @param leaseUntil  end of the executor's lease (PROCESSING only)
 * @param attempts    how many executions were started
 * @param createdAt   first claim
 * @param updatedAt   last state change
 * @param expiresAt   after this instant the record is as if absent
 */
public record IdempotencyRecord(String scopeKey, String tenant, String principal, String endpoint,
                                String requestHash, RecordStatus status, Optional<String> resourceId,
                                Optional<StoredResponse> response, String ownerToken,
                                Optional<Instant> leaseUntil, int attempts, Instant createdAt,
                                Instant updatedAt, Instant expiresAt) {
    public IdempotencyRecord {
        Objects.requireNonNull(scopeKey, "scopeKey");
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(principal, "principal");
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(requestHash, "requestHash");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(resourceId, "resourceId");
        Objects.requireNonNull(response, "response");
        Objects.requireNonNull(ownerToken, "ownerToken");
        Objects.requireNonNull(leaseUntil, "leaseUntil");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(updatedAt, "updatedAt");
        Objects.requireNonNull(expiresAt, "expiresAt");
    }
}
