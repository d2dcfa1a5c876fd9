package dev.idempotency.core;

/** How a joined business transaction ended, as its synchronization was told. */
public enum TransactionEnd {
    /** Still running. */
    OPEN,
    /** Reported committed; a commit that raised may still be a heuristic hazard (settled by the fenced update). */
    COMMITTED,
    ROLLED_BACK,
    /** Any other end status: the fenced update settles it. */
    UNKNOWN;

    /** From {@link BusinessTransaction#afterCompletion}'s true, false or null. */
    public static TransactionEnd of(Boolean committed) {
        return committed == null ? UNKNOWN : committed ? COMMITTED : ROLLED_BACK;
    }
}
