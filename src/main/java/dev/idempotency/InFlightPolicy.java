package dev.idempotency;

/** The answer to a duplicate that arrives while the first request with its key is still running. */
public enum InFlightPolicy {
    /** Take {@code idempotency.in-flight} (itself {@link #CONFLICT} by default). */
    CONFIGURED,
    /** 409 problem+json with {@code Retry-After} in whole seconds. */
    CONFLICT,
    /** 425 Too Early problem+json with {@code Retry-After}. */
    TOO_EARLY,
    /** 202 Accepted with {@code Location} of the status resource ({@code idempotency.status-path}). */
    ACCEPTED,
    /**
     * Wait up to {@code idempotency.in-flight-wait} for the first to finish and answer with its outcome;
     * at most {@code idempotency.in-flight-max-waiters} requests wait at once, the others get
     * {@link #CONFLICT}.
     */
    WAIT
}
