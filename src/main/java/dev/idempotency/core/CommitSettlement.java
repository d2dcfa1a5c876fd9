package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;

import java.time.Duration;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The one place that answers "did the business transaction commit?" when its end did not say so plainly, for every
 * trigger, and what becomes of the claim then. The answer always comes from the record, by the protocol's fenced
 * update ({@link RecoveryPhase#settleUnknownCommit}): if giving the claim back changes a row, nothing
 * committed; if the record is SUCCEEDED under our token, the commit went through. Never from a read alone, and
 * never from the transaction manager's word alone (Narayana reports a one-phase heuristic hazard to
 * synchronizations as committed).
 */
public final class CommitSettlement {
    private static final Logger LOG = Logger.getLogger(CommitSettlement.class.getName());
    private static final Duration RETRY_AFTER = Duration.ofSeconds(1);

    private final IdempotencyProtocol protocol;

    public CommitSettlement(IdempotencyProtocol protocol) {
        this.protocol = protocol;
    }

    /** How the commit of a business transaction the library began ended, as settled. */
    public sealed interface OwnedCommit {
        /** It committed (plainly, or as the fenced update proved). */
        record Committed() implements OwnedCommit {
        }

        /**
         * The database refused it for a conflict with another transaction (a Galera node's write set that lost
         * certification to another node's takeover): nothing committed; the answer is
         * {@link RecoveryPhase#afterRefusedCommit}'s.
         */
        record RefusedForConflict() implements OwnedCommit {
        }

        /**
         * It rolled back at commit: nothing committed, and the claim was given back by the transaction's completion.
         *
         * @param applicationCause the application's own exception when it caused the rollback (a constraint checked
         *                         at flush); empty when the transaction was only marked rollback-only
         */
        record RolledBack(BusinessCommitFailure failure, Optional<RuntimeException> applicationCause)
                implements OwnedCommit {
        }

        /** Its outcome was unknown, and the fenced update found that nothing committed (the claim is given back). */
        record NotCommitted(BusinessCommitFailure failure) implements OwnedCommit {
        }
    }

    /** Commits a business transaction the library began, and settles an unknown outcome at once. */
    public OwnedCommit commitOwned(BusinessTransaction tx, Claim claim) {
        try {
            tx.commit();
        } catch (BusinessCommitFailure failure) {
            if (failure.conflict()) {
                LOG.log(Level.FINE, "the database refused the commit of " + claim + " for a conflict", failure);
                return new OwnedCommit.RefusedForConflict();
            }
            if (failure.rolledBack()) {
                return new OwnedCommit.RolledBack(failure, applicationCause(failure));
            }
            if (protocol.recovery().settleUnknownCommit(claim).isEmpty()) {
                return new OwnedCommit.NotCommitted(failure);
            }
        }
        return new OwnedCommit.Committed();
    }

    /** What goes out once a joined business transaction has ended. */
    public enum JoinedAnswer {
        /** It committed: the first response. */
        FIRST_RESPONSE,
        /** It rolled back as the application knows (its exception mapped): the application's answer stands. */
        APPLICATION_ANSWER,
        /**
         * It rolled back although the method answered without an error (the application marked it
         * rollback-only): that answer must not reach the client as done; the retry runs again.
         */
        ROLLED_BACK,
        /** Nothing committed, or nobody can tell now: 503, retry the same key. */
        RETRY_LATER
    }

    /**
     * A joined transaction's commit reported plainly: committed, and the answer is the one the method made (a commit
     * that raised turned it into the application's mapping of that error).
     */
    public static boolean committedPlainly(TransactionEnd end, int firstStatus, int answeredStatus) {
        return end == TransactionEnd.COMMITTED && answeredStatus == firstStatus;
    }

    /**
     * A joined transaction ended otherwise: settled now, before the answer goes out. {@code answeredStatus} is what
     * the application answered: the method's own response, or its mapping of an error at commit.
     */
    public JoinedAnswer settleJoined(Claim claim, TransactionEnd end, int firstStatus, int answeredStatus) {
        Optional<Boolean> committed;
        try {
            committed = Optional.of(protocol.recovery().settleUnknownCommit(claim).isPresent());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "IDEM-W007 could not settle the commit of " + claim
                    + "; it will be taken over when its lease ends", e);
            committed = Optional.empty();
        }
        if (committed.orElse(false)) {
            return JoinedAnswer.FIRST_RESPONSE;
        }
        boolean knownRollback = end == TransactionEnd.ROLLED_BACK;
        if (!knownRollback || committed.isEmpty()) {
            return JoinedAnswer.RETRY_LATER;
        }
        // The method's own answer, unchanged by an error at commit: the application marked its transaction
        // rollback-only and still answered as if it was done.
        boolean methodsOwnAnswer = answeredStatus == firstStatus && OutcomeClassification.isSuccess(answeredStatus);
        return methodsOwnAnswer ? JoinedAnswer.ROLLED_BACK : JoinedAnswer.APPLICATION_ANSWER;
    }

    /**
     * Registers, on a transaction in which the claim's outcome is (to be) finished, that a rollback gives the claim
     * back from the transaction's completion, on whatever thread ends it, so that the next attempt runs at once
     * instead of waiting out the lease.
     *
     * @param unknownIsRollback whether an end status that is neither committed nor rolled back counts as a rollback
     * @return the guard that {@link Guard#settledHere} turns off once the claim was settled otherwise
     */
    public Guard giveBackOnRollback(BusinessTransaction tx, Claim claim, boolean unknownIsRollback) {
        Guard guard = new Guard();
        tx.afterCompletion(committed -> {
            boolean rolledBack = Boolean.FALSE.equals(committed) || (committed == null && unknownIsRollback);
            if (rolledBack && guard.settled.compareAndSet(false, true)) {
                afterRollback(claim);
            }
        });
        return guard;
    }

    /** Turns off a {@link #giveBackOnRollback} once the claim was settled otherwise (fenced out). */
    public static final class Guard {
        private final java.util.concurrent.atomic.AtomicBoolean settled = new java.util.concurrent.atomic.AtomicBoolean();

        private Guard() {
        }

        public void settledHere() {
            settled.set(true);
        }
    }

    /**
     * From a transaction's completion, after a finish in that transaction: the fenced update tells whether the finish
     * committed after all (a heuristic end) and otherwise gives the claim back. A failure is only logged: the lease
     * bounds the claim.
     */
    public void afterRollback(Claim claim) {
        try {
            protocol.recovery().settleUnknownCommit(claim);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "IDEM-W003 could not give back the claim " + claim + " after its transaction"
                    + " rolled back; it will be taken over when its lease ends", e);
        }
    }

    /**
     * At the end of a run whose claim nobody settled: a joined transaction that may have committed ({@code end} not
     * {@link TransactionEnd#COMMITTED}) is settled by the fenced update; without a finish ({@code end} empty) the
     * claim goes back, so that a retry runs at once. A failure is only logged: the lease bounds the claim.
     */
    public void settleAbandoned(Claim claim, Optional<TransactionEnd> end) {
        try {
            if (end.isPresent()) {
                if (end.get() != TransactionEnd.COMMITTED) {
                    protocol.recovery().settleUnknownCommit(claim);
                }
            } else {
                protocol.completion().release(claim);
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "IDEM-W003 could not release an abandoned claim " + claim
                    + "; it will be taken over when its lease ends", e);
        }
    }

    /**
     * A run none of whose work may commit (its lease lost, its transaction marked rollback-only, its result not
     * storable): its transaction is abandoned and its claim given back, both quietly (the lease bounds the claim).
     */
    public void nothingCommits(BusinessTransaction tx, Claim claim) {
        tx.abandonQuietly();
        giveBackQuietly(claim);
    }

    /** Gives a claim back after a run that left nothing behind; a failure only logged, the lease bounds the claim. */
    public void giveBackQuietly(Claim claim) {
        try {
            protocol.completion().release(claim);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "IDEM-W003 could not give back the claim " + claim
                    + "; it will be taken over when its lease ends", e);
        }
    }

    /** The 500 for a method that answered success from a transaction that then rolled back. */
    public static Problem rolledBackProblem() {
        return Problem.of(ProblemType.ROLLED_BACK, "the operation's transaction was marked rollback-only and rolled"
                + " back: nothing was done; a retry with the same key runs it again");
    }

    /** The 503 for an outcome that did not commit or cannot be told now. */
    public static Problem retryLaterProblem() {
        return Problem.of(ProblemType.STORE_UNAVAILABLE, "the outcome could not be committed; retry with the same key")
                .retryAfter(RETRY_AFTER);
    }

    /** {@link #retryLaterProblem()} as the exception that carries it. */
    public static IdempotencyException retryLater(Throwable cause) {
        return new IdempotencyException(retryLaterProblem(), cause);
    }

    /** {@link #rolledBackProblem()} as the exception that carries it. */
    public static IdempotencyException rolledBack(Throwable cause) {
        return new IdempotencyException(rolledBackProblem(), cause);
    }

    // A rollback at commit caused by the application (a constraint checked at flush) is the application's
    // error: its own exception, so that its mappers answer, not a library wrapper.
    // Empty when the transaction was only marked rollback-only.
    private static Optional<RuntimeException> applicationCause(BusinessCommitFailure failure) {
        Throwable rollback = failure.getCause();
        if (rollback != null && rollback.getCause() instanceof RuntimeException cause) {
            return Optional.of(cause);
        }
        return Optional.empty();
    }
}
