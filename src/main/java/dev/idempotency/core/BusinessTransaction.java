package dev.idempotency.core;

import java.util.function.Consumer;

/**
 * The transaction an execution's business work runs in, as the execution stages see it: joined when the
 * application began one, else begun (and committed) by the library. The JTA adapter implements it.
 */
public interface BusinessTransaction {

    /** Whether the library began it (and so commits it); false when joined. */
    boolean owned();

    /**
     * Makes sure it will not commit: rolls back an owned one, marks a joined one rollback-only.
     *
     * @throws BusinessCommitFailure when that cannot be done
     */
    void abandon();

    /**
     * {@link #abandon()}, for a transaction that may have ended already: one the server rolled back after its
     * timeout cannot be marked again, and commits nothing either way.
     */
    void abandonQuietly();

    /** Whether it can still commit: active, not marked rollback-only, not ended. Any thread. */
    boolean active();

    /**
     * Commits an owned transaction.
     *
     * @throws BusinessCommitFailure when it rolled back at commit, or its outcome is unknown
     */
    void commit();

    /**
     * Tells, once the transaction has ended, whether it committed: true, false when it rolled back, null for any
     * other end status (true alone does not prove a commit: a one-phase heuristic hazard is reported as committed).
     */
    void afterCompletion(Consumer<Boolean> committed);
}
