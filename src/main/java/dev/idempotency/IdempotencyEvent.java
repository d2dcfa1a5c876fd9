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

    /**
     * The task of an asynchronous endpoint ended on the executor: its outcome is stored ({@code status}
     * {@code SUCCEEDED} or {@code FAILED_FINAL}), or its claim was given back for a retry to run it again
     * ({@code FAILED_RETRYABLE}, also when it could not run at all).
     */
    record TaskEnded(String endpoint, String scopeKey, RecordStatus status) implements IdempotencyEvent {
    }

    /**
     * A message to an idempotent listener was handled: how, at which delivery ({@code JMSXDeliveryCount}).
     * {@code scopeKey} is empty when the message could not be keyed. Fired inside the delivery's transaction:
     * an observer that must see what that transaction left observes it
     * {@code @Observes(during = TransactionPhase.AFTER_COMPLETION)}.
     */
    record MessageHandled(String endpoint, String scopeKey, String messageId, int delivery, Handling handling)
            implements IdempotencyEvent {
        /** What became of one delivery of a message. */
        public enum Handling {
            /** The listener ran and its record was finished in the message's transaction, which acknowledges it. */
            EXECUTED,
            /** Already processed (a resend, a redelivery, a second copy): acknowledged without running. */
            DUPLICATE,
            /**
             * The listener failed finally: FAILED_FINAL is recorded, the delivery rolled back (nothing of it
             * commits), and the redelivery is acknowledged as a duplicate.
             */
            FAILED_FINAL,
            /**
             * Rolled back for the broker to redeliver: a retryable failure (the claim given back), a duplicate
             * still in flight after the wait, the store unavailable, a caller's limit.
             */
            REDELIVERED,
            /** A retryable failure of its last delivery: recorded as dead-lettered; the broker moves it to its DLQ. */
            DEAD_LETTERED,
            /** It cannot be taken (no key, a malformed body, a key reused for another message): rolled back. */
            REFUSED
        }
    }

    /**
     * An execution's outcome was written ({@code SUCCEEDED}, or {@code FAILED_FINAL} for a failure that is
     * replayed), by the fenced update in the transaction that commits it: fired inside that transaction, so an
     * observer that counts only what committed observes it {@code @Observes(during = TransactionPhase.AFTER_SUCCESS)}.
     */
    record Completed(String endpoint, String scopeKey, RecordStatus status, int attempt) implements IdempotencyEvent {
    }

    /**
     * A claim was given back ({@code FAILED_RETRYABLE}) after a run that left nothing behind: it failed retryably,
     * rolled back, lost its lease, or its commit's outcome was unknown and it had not committed. A retry runs at once.
     */
    record Released(String endpoint, String scopeKey, int attempt) implements IdempotencyEvent {
    }

    /**
     * The record store could not answer (connection refused, a timeout, the database down): the request was
     * answered 503 with {@code Retry-After}. {@code reason} is the store's error, without any key.
     */
    record StoreUnavailable(String endpoint, String reason) implements IdempotencyEvent {
    }

    /**
     * An HTTP request to an idempotent endpoint was answered with one of the library's problems instead of its
     * method's outcome: a missing or malformed key, a body too large or malformed, a key reused for another
     * request, a duplicate in flight (409, 425), a caller's limit, the store unavailable, an execution superseded
     * or rolled back. {@code scopeKey} is empty when the request could not be keyed. One per request; the more
     * specific events ({@link Mismatched}, {@link LimitReached}, {@link InFlightRejected}) come before it.
     */
    record Rejected(String endpoint, String scopeKey, ProblemType reason, int status) implements IdempotencyEvent {
    }

    /** A repeat got the stored outcome. */
    record Replayed(String endpoint, String scopeKey, RecordStatus status) implements IdempotencyEvent {
    }

    /** A duplicate arrived while the first was running and was answered without waiting (or after a wait). */
    record InFlightRejected(String endpoint, String scopeKey, InFlightPolicy policy) implements IdempotencyEvent {
    }

    /**
     * A duplicate found its operation in flight and waits for the outcome ({@code in-flight = wait}) in one of the
     * node's capped waiting places; a {@link Replayed} or an {@link InFlightRejected} follows when the wait ends.
     */
    record WaitingForOutcome(String endpoint, String scopeKey) implements IdempotencyEvent {
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

    /**
     * An administrator acted through the admin resource ({@link dev.idempotency.jaxrs.IdempotencyAdminResource}).
     *
     * @param endpoint      the endpoint concerned, or {@code ""}
     * @param scopeKey      the record concerned, or {@code ""} (a list, a purge)
     * @param action        {@code list}, {@code show}, {@code release} or {@code purge}
     * @param administrator the caller's name
     * @param result        what came of it: {@code listed 3}, {@code shown}, {@code released}, {@code changed},
     *                      {@code not-processing}, {@code not-found}, {@code purged 12}
     */
    record Administered(String endpoint, String scopeKey, String action, String administrator, String result)
            implements IdempotencyEvent {
    }

    /** Expired records were deleted. */
    record Purged(String endpoint, int count) implements IdempotencyEvent {
    }

    /** A per-principal limit turned a request away. */
    record LimitReached(String endpoint, String scopeKey, ProblemType limit) implements IdempotencyEvent {
    }

    /**
     * An operation whose lease had run out, and that no client retried, was settled in the background: taken
     * over (its executor, if still alive, can commit nothing), then completed with what the endpoint's
     * {@link dev.idempotency.spi.OutcomeResolver} found done downstream ({@code SUCCEEDED}), or made
     * {@code FAILED_RETRYABLE}, so that a retry runs at once (asking the resolver again) and retention removes it.
     *
     * @param status     the state it was left in
     * @param resolution what settled it
     */
    record Settled(String endpoint, String scopeKey, RecordStatus status, Resolution resolution)
            implements IdempotencyEvent {
        /** What settled a stuck operation. */
        public enum Resolution {
            /** The endpoint has no external side effects: nothing to ask, the operation is retryable. */
            NOTHING_TO_ASK,
            /** The resolver found it done downstream; its outcome is stored and replayed. */
            DONE,
            /** The resolver found it not done; retryable. */
            NOT_DONE,
            /** The resolver could not tell (or failed); retryable, and a retry asks it again. */
            UNKNOWN,
            /**
             * It was still PROCESSING when it expired, a retention after its lease ran out (stuck before a node's
             * look-back, or of an endpoint no deployment serves any more): as if absent already, settled without
             * asking, for the purge to remove.
             */
            EXPIRED
        }
    }
}
