package dev.idempotency.core;

import java.util.function.Supplier;

/**
 * How the protocol gets a transaction of its own: the claim, the re-read after a duplicate and failure
 * records commit independently of the business transaction, so that other instances see them at once.
 */
public interface TransactionBoundary {

    /**
     * Runs the work in a new transaction, suspending the caller's for its duration; commits when it
     * returns, rolls back when it throws (and rethrows).
     */
    <T> T requiresNew(Supplier<T> work);
}
