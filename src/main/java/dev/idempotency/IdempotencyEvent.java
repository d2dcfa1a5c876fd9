package dev.idempotency;

/**
 * What the protocol did, fired as a CDI event so that an application can count or log it
 * ({@code void on(@Observes IdempotencyEvent.Replayed e)}). Events carry the scope digest, never the
 * client's key.
 */
public sealed interface IdempotencyEvent {
    /** The endpoint concerned, or {@code ""} for store-wide events. */
    String endpoint();

    /** A new operation was claimed (the first execution starts). */
    record Claimed(String endpoint, String scopeKey) implements IdempotencyEvent {
    }

    /** A repeat got the stored outcome. */
    record Replayed(String endpoint, String scopeKey, RecordStatus status) implements IdempotencyEvent {
    }

    /** A duplicate arrived while the first was running and was answered without waiting (or after a wait). */
    record InFlightRejected(String endpoint, String scopeKey, InFlightPolicy policy) implements IdempotencyEvent {
    }

    /** The key was reused with a different request. */
    record Mismatched(String endpoint, String scopeKey) implements IdempotencyEvent {
    }

    /** An expired lease, a retryable failure or an expired record was taken over. */
    record TakenOver(String endpoint, String scopeKey, RecordStatus previousStatus, int attempt)
            implements IdempotencyEvent {
    }

    /** An executor tried to finish after another took its operation over; its work was rolled back. */
    record Fenced(String endpoint, String scopeKey) implements IdempotencyEvent {
    }

    /**
     * A running execution's lease could not be renewed (taken over, or the store unreachable until it ran
     * out): nothing of that run commits.
     */
    record LeaseLost(String endpoint, String scopeKey) implements IdempotencyEvent {
    }

    /** Expired records were deleted. */
    record Purged(String endpoint, int count) implements IdempotencyEvent {
    }

    /** A per-principal limit turned a request away. */
    record LimitReached(String endpoint, String scopeKey, ProblemType limit) implements IdempotencyEvent {
    }
}
