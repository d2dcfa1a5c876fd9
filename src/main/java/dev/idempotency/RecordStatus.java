package dev.idempotency;

/** The states of an idempotency record: {@code PROCESSING -> SUCCEEDED | FAILED_RETRYABLE | FAILED_FINAL}. */
public enum RecordStatus {
    /** Claimed; an executor holds the lease and the owner token. */
    PROCESSING,
    /** Finished with a 2xx/3xx outcome, committed together with the business data; replayed. */
    SUCCEEDED,
    /** Failed in a way that may succeed later; nothing was kept, a retry with the same key runs again. */
    FAILED_RETRYABLE,
    /** Failed for good (a 4xx outcome); the failure is replayed. */
    FAILED_FINAL;

    /** Whether a repeat of the operation gets the stored outcome back. */
    public boolean isReplayable() {
        return this == SUCCEEDED || this == FAILED_FINAL;
    }
}
