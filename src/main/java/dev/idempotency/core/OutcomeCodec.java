package dev.idempotency.core;

import dev.idempotency.spi.StoredResponse;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * What one trigger family (an HTTP request, a business-method call, a message) supplies to the {@link Execution}
 * stages: how its method is invoked, how what it returned is captured as the outcome to store, and how each way an
 * execution can end is rendered or acknowledged — an HTTP response, a method's return value, a message's
 * acknowledgement or redelivery. It decides nothing the stages decide (final or retryable, lease lost, commit
 * outcome unknown, replay); it only says what each of their results means for its caller.
 *
 * @param <R> what the trigger's method returns to its caller
 */
public interface OutcomeCodec<R> {

    /** Why another executor's outcome answers this run, whose own work does not commit. */
    enum Superseded {
        /** Its lease could not be held while it ran. */
        LEASE_LOST,
        /** Its finish was fenced out: the operation was taken over. */
        FENCED,
        /** The database refused its commit for a conflict with another transaction (another node's takeover). */
        REFUSED_AT_COMMIT
    }

    /** Runs the trigger's method, inside the business transaction and under the claim's lease. */
    Object invoke() throws Exception;

    /** The outcome of what the method returned, as it is stored and replayed (a throw counts as the method's). */
    StoredResponse capture(Object result) throws Exception;

    /** The form of the captured outcome the store keeps: redacted, sealed or without its body as its policy says. */
    default StoredResponse kept(StoredResponse first, Claim claim, OutcomeStorage outcomes) {
        return outcomes.forStorage(first, claim.operation().policy(), claim.operation().scopeKey());
    }

    /** The created resource's id the record keeps beside the outcome (a {@code Location}), if any. */
    default Optional<String> resourceId(StoredResponse first) {
        return Optional.empty();
    }

    /**
     * The outcome of a failure whose work commits all the same (the application declared the exception not to roll
     * back); empty — the default — when nothing of a failed run commits.
     */
    default Optional<StoredResponse> commitsDespite(Exception thrown, BusinessTransaction tx) {
        return Optional.empty();
    }

    /**
     * Whether the trigger settles the end of its transaction itself (the HTTP response filter does, once the
     * application's mappers have answered); otherwise a rollback after the finish gives the claim back from the
     * transaction's completion.
     */
    default boolean settlesTransactionEnd() {
        return false;
    }

    /** The method threw and nothing of its run commits (its transaction is abandoned already). */
    R failed(Throwable thrown, Claim claim) throws Exception;

    /** Another executor's outcome answers: {@code winner} gives it (a replay, or throws 409 while it runs). */
    R superseded(Superseded why, Claim claim, Supplier<Admission.Replay> winner) throws Exception;

    /** A retryable outcome of a run that returned (a 5xx): given back, nothing of it commits; answered as it is. */
    R retryable(Object result, StoredResponse first) throws Exception;

    /**
     * The transaction was marked rollback-only (by the application, or rolled back by a timeout) before the finish:
     * nothing of the run commits and its claim was given back.
     *
     * @param committedWith the failure the application declared not to roll back, when the run ended with one
     */
    R rolledBack(Object result, StoredResponse first, Optional<Exception> committedWith) throws Exception;

    /** The finish could not be stored: nothing of the run commits (its transaction is abandoned already). */
    R finishFailed(RuntimeException storeFailed, Claim claim) throws Exception;

    /** Finished in a transaction the caller owns: the outcome commits (or not) with the caller's work. */
    R finishedInCallersTransaction(BusinessTransaction tx, Claim claim, Object result, StoredResponse first,
                                   Optional<Exception> committedWith) throws Exception;

    /** Finished and committed in the library's own transaction. */
    R committed(Object result, StoredResponse first, Optional<Exception> committedWith) throws Exception;

    /** The library's own transaction rolled back at commit: nothing committed (the claim goes back with it). */
    R commitRolledBack(CommitSettlement.OwnedCommit.RolledBack rolledBack, Claim claim) throws Exception;

    /** The library's own commit had an unknown outcome, which the fenced update settled as not committed. */
    R notCommitted(CommitSettlement.OwnedCommit.NotCommitted notCommitted, Claim claim) throws Exception;
}
