package dev.idempotency.core;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.OutcomeResolver;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.spi.Resolution;
import dev.idempotency.spi.ResolutionRequest;
import dev.idempotency.spi.StoreUnavailableException;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * The protocol's recovery: what becomes of an operation whose execution did not end plainly — a commit of unknown
 * outcome or refused for a conflict, a fenced-out executor, an earlier attempt whose downstream outcome must be
 * asked, a stuck operation nobody retried, an administrator's release — and the purge of expired parts.records().
 */
public final class RecoveryPhase {
    // How long the settler holds an operation of an endpoint it does not serve while it settles it.
    private static final Duration SETTLE_LEASE = Duration.ofMinutes(1);

    private final ProtocolParts parts;
    private final CompletionPhase completion;

    RecoveryPhase(ProtocolParts parts, CompletionPhase completion) {
        this.parts = parts;
        this.completion = completion;
    }

    /**
     * After the business commit failed with an unknown outcome (connection lost during COMMIT): settles
     * it with the fenced update rather than a read. If releasing the claim succeeds, nothing had
     * committed; if it is fenced and the record is SUCCEEDED under our token, the commit went through.
     *
     * @return the committed record to replay, or empty when nothing committed (the claim is released)
     */
    public Optional<IdempotencyRecord> settleUnknownCommit(Claim claim) {
        try {
            return settleOnce(claim);
        } catch (IdempotencyException | StoreUnavailableException firstTry) {
            // The fenced update changes nothing twice, so a second try is safe. It matters when the first was
            // handed the very pooled connection that lost the COMMIT: the pool drops it on that failure.
            return settleOnce(claim);
        }
    }

    private Optional<IdempotencyRecord> settleOnce(Claim claim) {
        try {
            // A claim in the business transaction exists if and only if that committed: a read tells.
            if (!claim.inTransaction() && completion.release(claim)) {
                return Optional.empty();
            }
            Optional<IdempotencyRecord> now = parts.reads().inOwnTransaction(claim.operation().scopeKey());
            return now.filter(r -> r.status() == RecordStatus.SUCCEEDED && r.ownerToken().equals(claim.ownerToken()));
        } catch (StoreUnavailableException e) {
            throw ProtocolAnswers.unavailable(e);
        }
    }

    /**
     * A claim whose commit may or may not have happened is handed back by the fenced update (our token,
     * still PROCESSING), so that the client's retry takes over at once instead of waiting out the lease.
     * If that fails too, the lease bounds it.
     */
    void giveBack(Claim claim) {
        try {
            settleUnknownCommit(claim);
        } catch (RuntimeException stillUnreachable) {
            // The caller answers 503 either way; the claim, if it exists, ends with its lease.
        }
    }

    /**
     * After the database refused to commit the business transaction of a finished execution for a conflict with
     * another transaction (a serialization failure at COMMIT: on a Galera cluster, another node's takeover of the
     * record certified first): nothing of the execution committed. While the record is still this executor's
     * claim, it is given back and the answer is 503 (retry with the same key); once another executor has taken the
     * operation over, the answer is {@link #afterFenced}'s: its outcome, or 409 while it runs.
     *
     * @throws IdempotencyException 503 when the claim was still ours, 409 when the winner has no outcome yet
     */
    public Admission.Replay afterRefusedCommit(Claim claim) {
        Optional<IdempotencyRecord> found;
        try {
            completion.release(claim);
            found = parts.reads().inOwnTransaction(claim.operation().scopeKey());
        } catch (StoreUnavailableException e) {
            throw ProtocolAnswers.unavailable(e);
        }
        if (found.isEmpty() || found.get().ownerToken().equals(claim.ownerToken())) {
            throw new IdempotencyException(Problem.of(ProblemType.STORE_UNAVAILABLE, "the database refused to commit"
                    + " this attempt for a conflict with a concurrent transaction: nothing was done; retry with the same"
                    + " key").retryAfter(ProtocolAnswers.STORE_RETRY_AFTER).withState(AnswerStates.NOT_APPLIED_SAME_KEY));
        }
        return afterFenced(claim.operation(), found);
    }

    /**
     * The answer for an executor that was fenced out: the winner's outcome if it has one, else 409.
     */
    public Admission.Replay afterFenced(Operation op) {
        return afterFenced(op, parts.reads().inOwnTransaction(op.scopeKey()));
    }

    private Admission.Replay afterFenced(Operation op, Optional<IdempotencyRecord> found) {
        if (found.isPresent() && found.get().status().isReplayable() && op.fingerprint().matches(found.get().requestHash())) {
            return parts.answers().replay(op, found.get());
        }
        throw parts.answers().superseded(op, found);
    }

    /**
     * An attempt that took over from an earlier one of an endpoint with external side effects: its resolver asks
     * the downstream whether the earlier attempt acted. Done: its outcome is recorded and replayed; unknown: the
     * claim goes back and the answer is 503; not done: this attempt executes.
     */
    Admission resolveEarlierAttempt(Claim claim, IdempotencyRecord previous) {
        Operation op = claim.operation();
        Resolution resolution = ask(op.resolver().orElseThrow(),
                new ResolutionRequest(Optional.of(op.scope()), previous, op::derive));
        if (resolution instanceof Resolution.Done done) {
            if (claim.inTransaction()) {
                // Recorded in the business transaction, which its caller commits (it holds our uncommitted claim, so
                // a transaction of its own would wait on it).
                if (!completion.finish(claim, RecordStatus.SUCCEEDED, Optional.of(done.response()), done.resourceId())) {
                    return afterFenced(op);
                }
                Instant now = parts.clock().instant();
                return parts.answers().replay(op, RecordFactory.finished(claim, RecordStatus.SUCCEEDED, done.resourceId(),
                        Optional.of(done.response()), now, now.plus(op.policy().retention())));
            }
            if (!completion.finishAlone(claim, RecordStatus.SUCCEEDED, Optional.of(done.response()))) {
                return afterFenced(op);
            }
            IdempotencyRecord completed = parts.reads().inOwnTransaction(op.scopeKey()).orElseThrow();
            return parts.answers().replay(op, completed);
        }
        if (resolution instanceof Resolution.Unknown unknown) {
            completion.release(claim);
            throw new IdempotencyException(Problem.of(ProblemType.STORE_UNAVAILABLE,
                    "the outcome of an earlier attempt is not known yet: " + unknown.reason())
                    .retryAfter(op.policy().retryAfterMax()));
        }
        return new Admission.Execute(claim);
    }

    /**
     * An administrator's release of an operation in progress (stuck, or held by an executor that hangs while
     * renewing its lease): FAILED_RETRYABLE, so that the next retry runs it again (asking the endpoint's
     * resolver first, where it has external side effects). Fenced on the owner token of the record the
     * administrator saw: a record that changed since is left alone. An executor still running can no longer
     * commit its outcome.
     *
     * @param retention how long the released record is kept at least (the endpoint's retention)
     * @return false when the record is no longer the one seen in progress
     */
    public boolean releaseByAdministrator(IdempotencyRecord seen, Duration retention) {
        if (seen.status() != RecordStatus.PROCESSING) {
            return false;
        }
        Instant now = parts.clock().instant();
        Completion released = new Completion(RecordStatus.FAILED_RETRYABLE, Optional.empty(), Optional.empty(), now,
                now.plus(retention));
        boolean done;
        try {
            done = parts.transactions().requiresNew(() -> parts.store().finish(seen.scopeKey(), seen.ownerToken(), released));
        } catch (StoreUnavailableException e) {
            throw ProtocolAnswers.unavailable(e);
        }
        if (done) {
            parts.events().publish(new IdempotencyEvent.Released(seen.endpoint(), seen.scopeKey(), seen.attempts()));
        }
        return done;
    }

    /** Deletes expired, finished records in batches of {@code batchSize}; at most {@code maxBatches}. */
    public int purgeExpired(int batchSize, int maxBatches) {
        int total = 0;
        for (int i = 0; i < maxBatches; i++) {
            Instant now = parts.clock().instant();
            int deleted = parts.transactions().requiresNew(() -> parts.store().purgeExpired(now, batchSize));
            total += deleted;
            if (deleted < batchSize) {
                break;
            }
        }
        if (total > 0) {
            parts.events().publish(new IdempotencyEvent.Purged("", total));
        }
        return total;
    }

    /**
     * Settles an operation whose lease ran out and that no client retried ({@link Settler} finds them): takes it
     * over by the fenced compare-and-set, so that its executor, if still alive, commits nothing; then, for an
     * endpoint with external side effects, asks its resolver whether the downstream did it and stores that
     * outcome; otherwise (or when the resolver says not done, cannot tell, or fails) makes it FAILED_RETRYABLE,
     * so that a retry runs at once and retention removes it. Safe on many nodes: one takeover wins.
     *
     * @param policy   the endpoint's policy; empty for an endpoint this deployment does not serve, whose record
     *                 is settled only once it has expired (it is then as if absent anyway, as an expired record
     *                 of any endpoint is: settled without asking, its expiry kept for the purge)
     * @param resolver the endpoint's resolver, when it has external side effects
     * @return what was done; empty when the record was not stuck or another executor changed it first
     */
    public Optional<IdempotencyEvent.Settled> settle(IdempotencyRecord stuck, Optional<EndpointPolicy> policy,
                                                     Optional<OutcomeResolver> resolver) {
        Instant now = parts.clock().instant();
        boolean leaseRanOut = stuck.leaseUntil().map(until -> until.isBefore(now)).orElse(true);
        boolean expired = !stuck.expiresAt().isAfter(now);
        if (stuck.status() != RecordStatus.PROCESSING || !leaseRanOut || (policy.isEmpty() && !expired)) {
            return Optional.empty();
        }
        // An expired record is as if absent: a retry would start anew, so there is nothing to ask or keep; it is
        // settled as it is, for the purge to remove.
        Optional<EndpointPolicy> serving = expired ? Optional.empty() : policy;
        Duration lease = serving.map(EndpointPolicy::lease).orElse(SETTLE_LEASE);
        Instant leaseUntil = now.plus(lease);
        // A known endpoint's record keeps expiring a retention after its lease ends, as the settler finds it.
        Instant expiresAt = serving.map(p -> later(stuck.expiresAt(), leaseUntil.plus(p.retention())))
                .orElse(stuck.expiresAt());
        String token = parts.records().newToken();
        IdempotencyRecord settling = parts.records().settling(stuck, token, leaseUntil, now, expiresAt);
        boolean won = parts.transactions().requiresNew(() -> parts.store().takeOver(stuck.scopeKey(), stuck.ownerToken(),
                RecordStatus.PROCESSING, settling));
        if (!won) {
            return Optional.empty();
        }
        IdempotencyEvent.Settled.Resolution how = IdempotencyEvent.Settled.Resolution.NOTHING_TO_ASK;
        Optional<Resolution.Done> done = Optional.empty();
        if (serving.isEmpty()) {
            how = IdempotencyEvent.Settled.Resolution.EXPIRED;
        } else if (serving.get().externalSideEffects() && resolver.isPresent()) {
            Resolution resolution = ask(resolver.get(), new ResolutionRequest(Optional.empty(), stuck,
                    purpose -> ScopeDigest.derive(stuck.scopeKey(), purpose)));
            if (resolution instanceof Resolution.Done found) {
                done = Optional.of(found);
                how = IdempotencyEvent.Settled.Resolution.DONE;
            } else {
                how = resolution instanceof Resolution.NotDone ? IdempotencyEvent.Settled.Resolution.NOT_DONE
                        : IdempotencyEvent.Settled.Resolution.UNKNOWN;
            }
        }
        RecordStatus status = done.isPresent() ? RecordStatus.SUCCEEDED : RecordStatus.FAILED_RETRYABLE;
        Instant ended = parts.clock().instant();
        Completion settled = new Completion(status, done.flatMap(Resolution.Done::resourceId),
                done.map(Resolution.Done::response), ended,
                serving.map(p -> ended.plus(p.retention())).orElse(stuck.expiresAt()));
        if (!parts.transactions().requiresNew(() -> parts.store().finish(stuck.scopeKey(), token, settled))) {
            // Only another settler or a retry that took over our fresh lease after it ran out gets here.
            return Optional.empty();
        }
        IdempotencyEvent.Settled event = new IdempotencyEvent.Settled(stuck.endpoint(), stuck.scopeKey(), status, how);
        parts.events().publish(event);
        return Optional.of(event);
    }

    // A resolver that fails (the downstream is unreachable, its client throws) cannot tell: the outcome stays
    // unknown, and the operation must not run again on that account nor leave a held claim behind.
    private static Resolution ask(OutcomeResolver resolver, ResolutionRequest request) {
        try {
            return resolver.resolve(request);
        } catch (RuntimeException failed) {
            return new Resolution.Unknown(String.valueOf(failed));
        }
    }

    private static Instant later(Instant a, Instant b) {
        return a.isAfter(b) ? a : b;
    }
}
