package dev.idempotency.core;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.RecordStatus;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.DuplicateRecordException;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.OutcomeCache;
import dev.idempotency.spi.QuotaCharge;
import dev.idempotency.spi.QuotaExceededException;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.spi.StoreUnavailableException;
import dev.idempotency.spi.StoredResponse;

import java.time.Clock;
import java.time.Instant;
import java.util.Optional;

/**
 * The protocol's completion: an execution's outcome recorded by the update fenced on its owner token — in the
 * business transaction for a success, in a transaction of its own for a failure — or its claim given back.
 */
public final class CompletionPhase {

    private final ProtocolParts parts;
    CompletionPhase(ProtocolParts parts) {
        this.parts = parts;
    }

    /**
     * Ends an execution in the current (business) transaction: the conditional update that commits with the
     * business data. False means this executor was fenced out; the caller must roll back.
     */
    public boolean finish(Claim claim, RecordStatus status, Optional<StoredResponse> response,
                          Optional<String> resourceId) {
        return finish(claim, status, response, resourceId, true);
    }

    // withBusinessWork: whether the outcome commits with the business transaction's work (a final failure keeps it).
    private boolean finish(Claim claim, RecordStatus status, Optional<StoredResponse> kept,
                           Optional<String> resourceId, boolean withBusinessWork) {
        Instant now = parts.clock().instant();
        Optional<StoredResponse> response = kept.map(r -> AnswerStates.marked(r, status, withBusinessWork));
        Completion completion = new Completion(status, resourceId, response, now,
                now.plus(claim.operation().policy().retention()));
        String endpoint = claim.operation().policy().endpoint();
        String scopeKey = claim.operation().scopeKey();
        boolean finished;
        long started = System.nanoTime();
        try {
            finished = claim.inTransaction()
                    ? parts.store().finishInTransaction(parts.records().claimed(claim, now), completion, new QuotaCharge(false, 0,
                            claim.newRecord(), claim.operation().policy().maxKeysPerEndpoint()))
                    : parts.store().finish(scopeKey, claim.ownerToken(), completion);
        } catch (QuotaExceededException exceeded) {
            // The key of a claim in the business transaction is charged here: the transaction must roll back.
            throw parts.answers().limitReached(claim.operation(), exceeded.limit());
        } catch (StoreUnavailableException e) {
            throw ProtocolAnswers.unavailable(e);
        } finally {
            parts.events().timed(ProtocolEvents.Step.FINISH, endpoint, ProtocolEvents.since(started));
        }
        if (finished && status.isReplayable() && claim.operation().policy().cacheOutcomes()) {
            // Only once it has committed: a cached outcome of a transaction that rolled back would be a lie.
            IdempotencyRecord outcome = RecordFactory.finished(claim, completion.status(), completion.resourceId(),
                    completion.response(), completion.updatedAt(), completion.expiresAt());
            parts.transactions().afterCommit(() -> parts.cache().put(outcome));
        }
        if (!finished) {
            parts.events().publish(new IdempotencyEvent.Fenced(endpoint, scopeKey));
        } else if (status == RecordStatus.FAILED_RETRYABLE) {
            parts.events().publish(new IdempotencyEvent.Released(endpoint, scopeKey, claim.attempt()));
        } else {
            parts.events().publish(new IdempotencyEvent.Completed(endpoint, scopeKey, status, claim.attempt()));
        }
        return finished;
    }

    /**
     * {@link #finish} in a transaction of its own: for failures, whose business transaction rolled back. A claim in
     * the business transaction rolled back with it: its final failure is recorded as a finished record of its own
     * (unless another request claimed the key meanwhile, or the failed attempt took over an existing record), and
     * there is nothing to give back.
     */
    public boolean finishAlone(Claim claim, RecordStatus status, Optional<StoredResponse> response) {
        if (!claim.inTransaction()) {
            return parts.transactions().requiresNew(() -> finish(claim, status, response, Optional.empty(), false));
        }
        if (status == RecordStatus.FAILED_RETRYABLE || !claim.newRecord()) {
            return true;
        }
        Operation op = claim.operation();
        EndpointPolicy policy = op.policy();
        Instant now = parts.clock().instant();
        IdempotencyRecord failed = RecordFactory.finished(claim, status, Optional.empty(),
                response.map(r -> AnswerStates.marked(r, status, false)), now,
                now.plus(policy.retention()));
        try {
            parts.transactions().requiresNew(() -> {
                parts.store().insert(failed, new QuotaCharge(false, 0, true, policy.maxKeysPerEndpoint()), op.aliasKeys());
                return null;
            });
        } catch (DuplicateRecordException | QuotaExceededException notRecorded) {
            return false;
        }
        parts.events().publish(new IdempotencyEvent.Completed(policy.endpoint(), op.scopeKey(), status, claim.attempt()));
        return true;
    }

    /**
     * Gives the operation back after an execution that left nothing behind (rolled back, crashed before
     * its outcome was known): FAILED_RETRYABLE, so the next retry runs at once instead of waiting for
     * the lease. Fenced like every change.
     */
    public boolean release(Claim claim) {
        // A claim in the business transaction goes back with its rollback.
        if (claim.inTransaction()) {
            return true;
        }
        try {
            return finishAlone(claim, RecordStatus.FAILED_RETRYABLE, Optional.empty());
        } catch (StoreUnavailableException refused) {
            if (!refused.isContention()) {
                throw refused;
            }
            // The give-back's commit lost to another transaction on the record (on a Galera cluster: another node's
            // takeover, certified first): the record is not ours to give back any more, and nothing of it changed.
            return false;
        }
    }
}
