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
     *
     * @throws dev.idempotency.spi.StoreUnavailableException (contention) when the commit rolled back
     * @throws CommitOutcomeUnknownException when the commit failed without telling whether it happened
     */
    <T> T requiresNew(Supplier<T> work);

    /**
     * Runs a read outside any transaction (the caller's suspended for its duration), so that it costs one
     * statement and no commit. The default runs it where it is, for callers that hold no transaction.
     */
    default <T> T withoutTransaction(Supplier<T> read) {
        return read.get();
    }

    /**
     * Runs {@code action} once the transaction on this thread has committed, never when it rolls back; at once when
     * there is none. The default, for callers that hold no transaction, runs it at once.
     */
    default void afterCommit(Runnable action) {
        action.run();
    }
}
