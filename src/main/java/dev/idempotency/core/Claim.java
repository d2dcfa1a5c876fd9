package dev.idempotency.core;

/**
 * The right to execute an operation: held by whoever installed {@link #ownerToken()}. Every later state
 * change is conditional on the token, so a claim that was taken over can no longer change anything.
 *
 * @param operation     the operation
 * @param ownerToken    128 random bits, hex
 * @param attempt       1 for the first execution, then one more per takeover
 * @param newRecord     whether the claim inserted the record: for a claim in the business transaction, its
 *                      caller's count of stored keys is charged when it finishes
 */
public record Claim(Operation operation, String ownerToken, int attempt, boolean newRecord) {

    /** A claim of an existing record, or one committed in a transaction of its own (which charged its key then). */
    public Claim(Operation operation, String ownerToken, int attempt) {
        this(operation, ownerToken, attempt, false);
    }

    /**
     * Whether the claim was written in the business transaction ({@code ClaimMode.IN_TRANSACTION}, as its endpoint's
     * policy says): it exists for others only if that commits, so a rollback gives it back and nothing renews it.
     */
    public boolean inTransaction() {
        return operation.policy().claimInTransaction();
    }

    @Override
    public String toString() {
        return "Claim[" + operation.scope() + ", attempt=" + attempt + (inTransaction() ? ", in transaction" : "") + "]";
    }
}
