package dev.idempotency.core;

/**
 * The right to execute an operation: held by whoever installed {@link #ownerToken()}. Every later state
 * change is conditional on the token, so a claim that was taken over can no longer change anything.
 *
 * @param operation  the operation
 * @param ownerToken 128 random bits, hex
 * @param attempt    1 for the first execution, then one more per takeover
 */
public record Claim(Operation operation, String ownerToken, int attempt) {
    @Override
    public String toString() {
        return "Claim[" + operation.scope() + ", attempt=" + attempt + "]";
    }
}
