package dev.idempotency.internal;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.core.Claim;
import dev.idempotency.core.IdempotencyProtocol;
import dev.idempotency.jta.JtaTransactions;
import dev.idempotency.spi.StoredResponse;

import java.time.Duration;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The one place that answers "did the business transaction commit?" when its end did not say so plainly,
 * and what the client gets then. The answer always comes from the record, by the protocol's fenced update
 * ({@link IdempotencyProtocol#settleUnknownCommit}): if giving the claim back changes a row, nothing
 * committed; if the record is SUCCEEDED under our token, the commit went through. Never from a read alone,
 * and never from the transaction manager's word alone (Narayana reports a one-phase heuristic hazard to
 * synchronizations as committed).
 */
public final class BusinessCommit {
    private static final Logger LOG = Logger.getLogger(BusinessCommit.class.getName());
    private static final Duration RETRY_AFTER = Duration.ofSeconds(1);

    /** What goes out once a joined business transaction has ended. */
    public enum Answer {
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

    private final IdempotencyProtocol protocol;

    BusinessCommit(IdempotencyProtocol protocol) {
        this.protocol = protocol;
    }

    /**
     * Commits a business transaction the library began. A rollback at commit is the application's failure
     * (a constraint checked at flush): its own exception is rethrown for its mappers. An unknown outcome is
     * settled here: committed, the first response goes out; not, 503.
     *
     * @return false when the database refused the commit for a conflict with another transaction (a Galera node's
     * write set that lost certification to another node's takeover): nothing committed, and the caller answers with
     * {@link IdempotencyProtocol#afterRefusedCommit}
     */
    public boolean commitOwned(JtaTransactions.BusinessTransaction tx, IdempotentExchange exchange, Claim claim,
                               StoredResponse first) {
        try {
            tx.commit();
        } catch (JtaTransactions.TransactionFailure failure) {
            if (failure.conflict()) {
                LOG.log(Level.FINE, "the database refused the commit of " + claim + " for a conflict", failure);
                return false;
            }
            if (failure.rolledBack()) {
                exchange.failed(ExchangeStage.FailureKind.BY_STATUS);
                throw applicationCause(failure).orElseGet(() -> rolledBack(failure));
            }
            if (protocol.settleUnknownCommit(claim).isEmpty()) {
                exchange.settled(Optional.empty());
                throw retryLater(failure);
            }
        }
        exchange.settled(first, false);
        return true;
    }

    /**
     * A joined transaction's commit reported plainly: committed, and the response is the one the method
     * made (a commit that raised turned it into the application's mapping of that error).
     */
    public boolean committedPlainly(ExchangeStage.AwaitingCommit awaiting, int responseStatus) {
        return awaiting.end() == ExchangeStage.TransactionEnd.COMMITTED && responseStatus == awaiting.first().status();
    }

    /**
     * A joined transaction ended otherwise: settled now, before the answer goes out. {@code responseStatus}
     * is what the application answered: the method's own response, or its mapping of an error at commit.
     */
    public Answer settleJoined(IdempotentExchange exchange, ExchangeStage.AwaitingCommit awaiting, int responseStatus) {
        Optional<Boolean> committed;
        try {
            committed = Optional.of(protocol.settleUnknownCommit(awaiting.claim()).isPresent());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "IDEM-W007 could not settle the commit of " + awaiting.claim()
                    + "; it will be taken over when its lease ends", e);
            committed = Optional.empty();
        } finally {
            exchange.settled(Optional.empty());
        }
        if (committed.orElse(false)) {
            return Answer.FIRST_RESPONSE;
        }
        boolean knownRollback = awaiting.end() == ExchangeStage.TransactionEnd.ROLLED_BACK;
        if (!knownRollback || committed.isEmpty()) {
            return Answer.RETRY_LATER;
        }
        // The method's own answer, unchanged by an error at commit: the application marked its transaction
        // rollback-only and still answered as if it was done.
        boolean methodsOwnAnswer = responseStatus == awaiting.first().status() && responseStatus < 400;
        return methodsOwnAnswer ? Answer.ROLLED_BACK : Answer.APPLICATION_ANSWER;
    }

    /** The 500 for a method that answered success from a transaction that then rolled back. */
    public static Problem rolledBackProblem() {
        return Problem.of(ProblemType.ROLLED_BACK, "the operation's transaction was marked rollback-only and rolled"
                + " back: nothing was done; a retry with the same key runs it again");
    }

    private static IdempotencyException rolledBack(Throwable cause) {
        return new IdempotencyException(rolledBackProblem(), cause);
    }

    /**
     * At the end of a request whose claim nobody settled: a joined transaction that may have committed is
     * settled by the fenced update; otherwise the claim goes back, so that a retry runs at once.
     */
    public void settleAbandoned(IdempotentExchange exchange, ExchangeStage stage) {
        Claim claim = stage.unsettledClaim().orElseThrow();
        try {
            if (stage instanceof ExchangeStage.AwaitingCommit awaiting) {
                if (awaiting.end() != ExchangeStage.TransactionEnd.COMMITTED) {
                    protocol.settleUnknownCommit(claim);
                }
            } else {
                protocol.release(claim);
            }
        } catch (RuntimeException e) {
            // The lease still bounds the claim: after it, a retry takes the operation over.
            LOG.log(Level.WARNING, "IDEM-W003 could not release an abandoned claim " + claim
                    + "; it will be taken over when its lease ends", e);
        }
        exchange.settled(Optional.empty());
    }

    /** The 503 for an outcome that did not commit or cannot be told now. */
    public static Problem retryLaterProblem() {
        return Problem.of(ProblemType.STORE_UNAVAILABLE, "the outcome could not be committed; retry with the same key")
                .retryAfter(RETRY_AFTER);
    }

    private static IdempotencyException retryLater(Throwable cause) {
        return new IdempotencyException(retryLaterProblem(), cause);
    }

    // A rollback at commit caused by the application (a constraint checked at flush) is the application's
    // error: its own exception, so that its mappers answer, not a library wrapper.
    // Empty when the transaction was only marked rollback-only.
    private static Optional<RuntimeException> applicationCause(JtaTransactions.TransactionFailure failure) {
        Throwable rollback = failure.getCause();
        if (rollback != null && rollback.getCause() instanceof RuntimeException cause) {
            return Optional.of(cause);
        }
        return Optional.empty();
    }
}
