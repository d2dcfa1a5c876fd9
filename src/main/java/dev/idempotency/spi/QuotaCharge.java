package dev.idempotency.spi;

/**
 * What a claim takes from its caller's limits, checked by the store in the claim's own transaction so
 * that no number of concurrent claims can pass a limit (never a count first and an insert after).
 *
 * @param inFlight    whether the claim adds one to the caller's PROCESSING operations (a takeover of a
 *                    PROCESSING record whose lease ran out does not: the operation was counted already)
 * @param maxInFlight the caller's limit of PROCESSING operations over all endpoints; 0: no limit
 * @param key         whether the claim adds one to the caller's stored records on the endpoint (only a
 *                    new record does)
 * @param maxKeys     the caller's limit of stored records on the endpoint; 0: no limit
 */
public record QuotaCharge(boolean inFlight, int maxInFlight, boolean key, int maxKeys) {
    /** A new record's charge without limits: it is counted, never refused. */
    public static final QuotaCharge UNLIMITED = new QuotaCharge(true, 0, true, 0);
    /** No charge: a claim in the business transaction, whose key is charged when it finishes. */
    public static final QuotaCharge NONE = new QuotaCharge(false, 0, false, 0);

    public QuotaCharge {
        if (maxInFlight < 0 || maxKeys < 0) {
            throw new IllegalArgumentException("limits are 0 (none) or positive");
        }
    }
}
