package dev.idempotency.spi;

/**
 * The store could not answer now but may later: connection lost, deadlock, serialization failure, lock
 * timeout. The client gets 503 with {@code Retry-After}; nothing was decided.
 */
public class StoreUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final boolean contention;

    /**
     * @param contention true when another transaction on the same row caused it (deadlock, lock timeout,
     *                   serialization failure), so that re-reading the record may settle the request
     */
    public StoreUnavailableException(String message, Throwable cause, boolean contention) {
        super(message, cause);
        this.contention = contention;
    }

    /** Whether a concurrent transaction on the same record caused the failure. */
    public boolean isContention() {
        return contention;
    }
}
