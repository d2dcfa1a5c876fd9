package dev.idempotency.spi;

/**
 * A claim would pass one of its caller's limits ({@link QuotaCharge}); the store's transaction must roll
 * back, so that nothing of the claim stays.
 */
public class QuotaExceededException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Which limit. */
    public enum Limit {
        /** The caller's PROCESSING operations over all endpoints. */
        IN_FLIGHT,
        /** The caller's stored records on the endpoint. */
        KEYS
    }

    private final Limit limit;

    public QuotaExceededException(Limit limit) {
        super("the caller's " + limit + " limit is reached", null, false, false);
        this.limit = limit;
    }

    public Limit limit() {
        return limit;
    }
}
