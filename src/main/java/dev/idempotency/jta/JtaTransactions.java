package dev.idempotency.jta;

import dev.idempotency.core.BusinessCommitFailure;
import dev.idempotency.core.CommitOutcomeUnknownException;
import dev.idempotency.core.TransactionBoundary;
import dev.idempotency.spi.StoreUnavailableException;
import jakarta.transaction.HeuristicMixedException;
import jakarta.transaction.HeuristicRollbackException;
import jakarta.transaction.InvalidTransactionException;
import jakarta.transaction.NotSupportedException;
import jakarta.transaction.RollbackException;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.SystemException;
import jakarta.transaction.Transaction;
import jakarta.transaction.TransactionManager;

import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Transactions through the server's JTA {@link TransactionManager}: the protocol's own short transactions
 * (the caller's suspended and resumed explicitly, as Narayana's {@code REQUIRES_NEW} does), and the
 * business transaction, joined when the application's {@code @Transactional} began one, else begun here.
 */
public final class JtaTransactions implements TransactionBoundary, dev.idempotency.core.BusinessTransactions {
    private final TransactionManager tm;
    private final ServerTransactionHooks hooks;

    public JtaTransactions(TransactionManager tm) {
        this.tm = tm;
        this.hooks = ServerTransactionHooks.of(tm);
    }

    @Override
    public <T> T requiresNew(Supplier<T> work) {
        Transaction suspended = suspend();
        try {
            begin();
            T result;
            try {
                result = work.get();
            } catch (RuntimeException | Error e) {
                rollbackQuietly(e);
                throw e;
            }
            try {
                commit();
            } catch (TransactionFailure failure) {
                // In the protocol's terms: a rolled-back commit lost to another transaction; an unknown one
                // may have committed, which the protocol settles with a fenced update.
                if (failure.rolledBack()) {
                    throw new StoreUnavailableException("IDEM-S009 the protocol's transaction rolled back at commit",
                            failure, true);
                }
                throw new CommitOutcomeUnknownException("IDEM-S010 the outcome of the protocol's commit is unknown",
                        failure);
            }
            return result;
        } finally {
            resume(suspended);
        }
    }

    @Override
    public <T> T withoutTransaction(Supplier<T> read) {
        Transaction suspended = suspend();
        try {
            return read.get();
        } finally {
            resume(suspended);
        }
    }

    /**
     * Runs {@code action} once the transaction on this thread has committed (on whatever thread ends it), never
     * when it rolls back; at once when there is none.
     */
    @Override
    public void afterCommit(Runnable action) {
        Transaction current;
        try {
            current = tm.getStatus() == Status.STATUS_NO_TRANSACTION ? null : tm.getTransaction();
        } catch (SystemException e) {
            throw new TransactionFailure("could not read the transaction on this thread", e, false);
        }
        if (current == null) {
            action.run();
            return;
        }
        try {
            current.registerSynchronization(new Synchronization() {
                @Override
                public void beforeCompletion() {
                }

                @Override
                public void afterCompletion(int status) {
                    if (status == Status.STATUS_COMMITTED) {
                        action.run();
                    }
                }
            });
        } catch (RollbackException | IllegalStateException willNotCommit) {
            // Marked rollback-only or ending: it will not commit.
        } catch (SystemException e) {
            throw new TransactionFailure("could not observe the transaction on this thread", e, false);
        }
    }

    /** The business transaction: the caller's when one is active, else a new one owned by the library. */
    @Override
    public BusinessTransaction joinOrBegin() {
        try {
            if (tm.getStatus() == Status.STATUS_ACTIVE || tm.getStatus() == Status.STATUS_MARKED_ROLLBACK) {
                return new BusinessTransaction(tm, hooks, tm.getTransaction(), false);
            }
            begin();
            return new BusinessTransaction(tm, hooks, tm.getTransaction(), true);
        } catch (SystemException e) {
            throw new TransactionFailure("could not begin the business transaction", e, false);
        }
    }

    private Transaction suspend() {
        try {
            return tm.getTransaction() == null ? null : tm.suspend();
        } catch (SystemException e) {
            throw new TransactionFailure("could not suspend the caller's transaction", e, false);
        }
    }

    private void resume(Transaction suspended) {
        if (suspended == null) {
            return;
        }
        try {
            tm.resume(suspended);
        } catch (InvalidTransactionException | SystemException e) {
            throw new TransactionFailure("could not resume the caller's transaction", e, false);
        }
    }

    private void begin() {
        try {
            tm.begin();
        } catch (NotSupportedException | SystemException e) {
            throw new TransactionFailure("could not begin a transaction", e, false);
        }
        hooks.afterBegin(tm);
    }

    private void commit() {
        try {
            hooks.beforeEnd(tm);
            tm.commit();
        } catch (RollbackException e) {
            throw new TransactionFailure("the transaction rolled back at commit", e, true);
        } catch (HeuristicMixedException | HeuristicRollbackException | SystemException e) {
            throw new TransactionFailure("the transaction's outcome is unknown", e, false);
        }
    }

    private void rollbackQuietly(Throwable cause) {
        try {
            if (tm.getTransaction() != null) {
                hooks.beforeEnd(tm);
                tm.rollback();
            }
        } catch (SystemException | IllegalStateException e) {
            cause.addSuppressed(e);
        }
    }

    /** A commit or begin that failed; {@link #rolledBack()} tells whether the outcome is known to be nothing. */
    public static final class TransactionFailure extends BusinessCommitFailure {
        private static final long serialVersionUID = 1L;

        TransactionFailure(String message, Throwable cause, boolean rolledBack) {
            super(message, cause, rolledBack);
        }

        /**
         * Whether the database refused the commit for a conflict with another transaction (SQLState class 40,
         * transaction rollback: a serialization failure or deadlock, as a Galera node reports a write set that lost
         * certification) rather than for something of the application's.
         */
        @Override
        public boolean conflict() {
            if (!rolledBack()) {
                return false;
            }
            // Narayana adds what its resources threw (an XAException caused by the driver's SQLException) to its
            // RollbackException as suppressed exceptions, not as its cause: both are searched.
            java.util.Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
            java.util.Deque<Throwable> next = new java.util.ArrayDeque<>();
            next.add(getCause() == null ? this : getCause());
            while (!next.isEmpty() && seen.size() < 64) {
                Throwable t = next.poll();
                if (!seen.add(t)) {
                    continue;
                }
                if (t instanceof java.sql.SQLException sql && String.valueOf(sql.getSQLState()).startsWith("40")) {
                    return true;
                }
                if (t.getCause() != null) {
                    next.add(t.getCause());
                }
                next.addAll(java.util.Arrays.asList(t.getSuppressed()));
            }
            return false;
        }
    }

    /** The transaction the business method runs in. */
    public static final class BusinessTransaction implements dev.idempotency.core.BusinessTransaction {
        private final TransactionManager tm;
        private final ServerTransactionHooks hooks;
        private final Transaction transaction;
        private final boolean owned;

        BusinessTransaction(TransactionManager tm, ServerTransactionHooks hooks, Transaction transaction, boolean owned) {
            this.tm = tm;
            this.hooks = hooks;
            this.transaction = transaction;
            this.owned = owned;
        }

        /** Whether the library began it (and so commits it); false when joined. */
        @Override
        public boolean owned() {
            return owned;
        }

        /** Makes sure it will not commit: rolls back an owned one, marks a joined one rollback-only. */
        @Override
        public void abandon() {
            try {
                if (owned) {
                    if (tm.getTransaction() != null) {
                        hooks.beforeEnd(tm);
                        tm.rollback();
                    }
                } else {
                    transaction.setRollbackOnly();
                }
            } catch (SystemException | IllegalStateException e) {
                throw new TransactionFailure("could not roll back the business transaction", e, false);
            }
        }

        /**
         * {@link #abandon()}, for a transaction that may have ended already: one the reaper rolled back after its
         * timeout cannot be marked again, and commits nothing either way.
         */
        @Override
        public void abandonQuietly() {
            try {
                abandon();
            } catch (TransactionFailure alreadyEnded) {
                // Rolled back already.
            }
        }

        /** Whether it can still commit: active, not marked rollback-only, not ended. Any thread. */
        @Override
        public boolean active() {
            try {
                return transaction.getStatus() == Status.STATUS_ACTIVE;
            } catch (SystemException e) {
                return false;
            }
        }

        /** Commits an owned transaction. */
        @Override
        public void commit() {
            if (!owned) {
                throw new IllegalStateException("a joined transaction is committed by its owner");
            }
            try {
                hooks.beforeEnd(tm);
                tm.commit();
            } catch (RollbackException e) {
                throw new TransactionFailure("the business transaction rolled back at commit", e, true);
            } catch (HeuristicMixedException | HeuristicRollbackException | SystemException e) {
                throw new TransactionFailure("the business transaction's outcome is unknown", e, false);
            }
        }

        /**
         * Tells, once the transaction has ended, whether it committed (for a joined transaction): true,
         * false when it rolled back, null for any other end status. Narayana reports a one-phase heuristic
         * hazard (the connection lost during COMMIT) as committed, so true alone does not prove it.
         */
        @Override
        public void afterCompletion(Consumer<Boolean> committed) {
            try {
                transaction.registerSynchronization(new Synchronization() {
                    @Override
                    public void beforeCompletion() {
                    }

                    @Override
                    public void afterCompletion(int status) {
                        committed.accept(status == Status.STATUS_COMMITTED ? Boolean.TRUE
                                : status == Status.STATUS_ROLLEDBACK ? Boolean.FALSE : null);
                    }
                });
            } catch (RollbackException e) {
                committed.accept(false);
            } catch (SystemException | IllegalStateException e) {
                throw new TransactionFailure("could not observe the business transaction", e, false);
            }
        }
    }
}
