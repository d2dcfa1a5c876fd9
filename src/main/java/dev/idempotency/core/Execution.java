package dev.idempotency.core;

import dev.idempotency.RecordStatus;
import dev.idempotency.spi.StoredResponse;

import java.util.Objects;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The stages every trigger runs once admission has claimed its operation, top to bottom:
 * <pre>
 * run     the method, inside the business transaction, under the claim's lease      (LeaseGuard)
 * finish  its outcome classified final or retryable once, stored by the fenced update (OutcomeClassification,
 *         OutcomeStorage, the protocol's completion)
 * settle  a lost lease, a fenced finish, a commit refused or of unknown outcome       (LeaseGuard, CommitSettlement)
 * render  what each end means for the trigger's caller                               (its OutcomeCodec)
 * </pre>
 * A trigger supplies only its {@link OutcomeCodec}; no trigger writes these stages again.
 */
public final class Execution {
    private static final Logger LOG = Logger.getLogger(Execution.class.getName());

    private final IdempotencyProtocol protocol;
    private final LeaseGuard leases;
    private final CommitSettlement commits;
    private final OutcomeStorage outcomes;

    public Execution(IdempotencyProtocol protocol, LeaseGuard leases, CommitSettlement commits,
                     OutcomeStorage outcomes) {
        this.protocol = Objects.requireNonNull(protocol, "protocol");
        this.leases = Objects.requireNonNull(leases, "leases");
        this.commits = Objects.requireNonNull(commits, "commits");
        this.outcomes = Objects.requireNonNull(outcomes, "outcomes");
    }

    /** Runs the claimed operation's method in {@code tx} and ends it as the stages decide; {@code codec} renders. */
    public <R> R run(Claim claim, BusinessTransaction tx, OutcomeCodec<R> codec) throws Exception {
        // Run.
        LeaseKeeper.Held lease = leases.hold(claim, tx);
        Object result;
        StoredResponse first;
        Optional<Exception> committedWith = Optional.empty();
        try (lease) {
            result = codec.invoke();
            first = codec.capture(result);
        } catch (Exception | Error thrown) {
            Optional<StoredResponse> despite = thrown instanceof Exception declared
                    ? codec.commitsDespite(declared, tx) : Optional.empty();
            if (despite.isEmpty()) {
                tx.abandonQuietly();
                return codec.failed(thrown, claim);
            }
            // The application declared that this exception does not roll back: its work commits, so its outcome,
            // as the trigger renders it, is recorded in the same transaction, as final.
            committedWith = Optional.of((Exception) thrown);
            result = null;
            first = despite.get();
        }
        if (leases.abandonedIfLost(lease, tx)) {
            return codec.superseded(OutcomeCodec.Superseded.LEASE_LOST, claim,
                    () -> protocol.recovery().afterFenced(claim.operation()));
        }
        // Finish: classified once.
        if (committedWith.isEmpty() && OutcomeClassification.ofStatus(first.status()) == RecordStatus.FAILED_RETRYABLE) {
            // A retryable outcome: nothing of it may stay, the retry runs again.
            tx.abandon();
            protocol.completion().release(claim);
            return codec.retryable(result, first);
        }
        if (!tx.active()) {
            // Marked rollback-only (or rolled back by a timeout): nothing of this run commits, and a server's
            // datasource refuses any statement in it (WildFly: IJ031070), so nothing is finished in it.
            commits.nothingCommits(tx, claim);
            return codec.rolledBack(result, first, committedWith);
        }
        // If the transaction rolls back after the finish, the record rolls back to this claim: it is given back then,
        // so that the next attempt runs at once. An owned transaction whose commit cannot tell is settled where it is
        // committed, below.
        Optional<CommitSettlement.Guard> onRollback = codec.settlesTransactionEnd() ? Optional.empty()
                : Optional.of(commits.giveBackOnRollback(tx, claim, !tx.owned()));
        boolean finished;
        try {
            finished = protocol.completion().finish(claim, OutcomeClassification.ofCommitted(first.status()),
                    Optional.of(codec.kept(first, claim, outcomes)), codec.resourceId(first));
        } catch (RuntimeException storeFailed) {
            tx.abandonQuietly();
            return codec.finishFailed(storeFailed, claim);
        }
        // Settle.
        if (!finished) {
            // Fenced out: another executor owns the operation now; our business work must not commit.
            onRollback.ifPresent(CommitSettlement.Guard::settledHere);
            tx.abandonQuietly();
            return codec.superseded(OutcomeCodec.Superseded.FENCED, claim,
                    () -> protocol.recovery().afterFenced(claim.operation()));
        }
        if (!tx.owned()) {
            return codec.finishedInCallersTransaction(tx, claim, result, first, committedWith);
        }
        CommitSettlement.OwnedCommit commit = commits.commitOwned(tx, claim);
        if (commit instanceof CommitSettlement.OwnedCommit.RefusedForConflict) {
            return codec.superseded(OutcomeCodec.Superseded.REFUSED_AT_COMMIT, claim,
                    () -> protocol.recovery().afterRefusedCommit(claim));
        }
        if (commit instanceof CommitSettlement.OwnedCommit.RolledBack rolledBack) {
            return codec.commitRolledBack(rolledBack, claim);
        }
        if (commit instanceof CommitSettlement.OwnedCommit.NotCommitted notCommitted) {
            return codec.notCommitted(notCommitted, claim);
        }
        return codec.committed(result, first, committedWith);
    }

    /**
     * Records a failure whose work did not commit, in a transaction of its own: final ({@code FAILED_FINAL}, replayed
     * to every retry), or retryable — given back, or, with {@code outcome}, kept as FAILED_RETRYABLE with it (a
     * message moved to its dead-letter queue). A failure to record is logged only: the record, still PROCESSING,
     * is taken over after its lease.
     *
     * @param outcome the stored form of the failure's outcome
     */
    public void recordFailure(Claim claim, RecordStatus status, Optional<StoredResponse> outcome) {
        try {
            if (status == RecordStatus.FAILED_FINAL || outcome.isPresent()) {
                protocol.completion().finishAlone(claim, status, outcome);
            } else {
                protocol.completion().release(claim);
            }
        } catch (RuntimeException notRecorded) {
            LOG.log(Level.WARNING, "IDEM-W006 could not record the failure of " + claim
                    + "; it will be taken over when its lease ends", notRecorded);
        }
    }

    /** The stored form of an outcome, as the endpoint's storage keeps it. */
    public OutcomeStorage outcomes() {
        return outcomes;
    }
}
