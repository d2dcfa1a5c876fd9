package dev.idempotency.spi;

import dev.idempotency.RecordStatus;

import java.time.Instant;
import java.util.Optional;

/**
 * The end state written by {@link RecordStore#finish}: a finished status with its outcome. The lease is
 * cleared; the owner token stays, so that a later takeover is still a compare-and-set on it.
 */
public record Completion(RecordStatus status, Optional<String> resourceId, Optional<StoredResponse> response,
                         Instant updatedAt, Instant expiresAt) {
    public Completion {
        if (status == RecordStatus.PROCESSING) {
            throw new IllegalArgumentException("a completion ends PROCESSING");
        }
    }
}
