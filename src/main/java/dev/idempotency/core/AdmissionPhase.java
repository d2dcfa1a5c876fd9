package dev.idempotency.core;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.InFlightPolicy;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.ResponseStorage;
import dev.idempotency.spi.DuplicateRecordException;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.QuotaCharge;
import dev.idempotency.spi.QuotaExceededException;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.spi.StoreUnavailableException;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The protocol's admission: decides a request before anything runs — a claim to execute (by INSERT, or by a
 * takeover that is a compare-and-set on the owner token), a stored outcome to replay, an in-flight answer, or a
 * refusal (thrown). It never checks and then inserts: a unique violation sends it back to the record that won.
 * Every path of the decision loops back into {@link #decide} with the record read again, for at most
 * {@value #MAX_DECISION_ROUNDS} rounds; the in-flight answers are {@link InFlightAnswers}', the node's claims in
 * business transactions {@link InTransactionClaims}'.
 */
public final class AdmissionPhase {
    private static final int MAX_DECISION_ROUNDS = 4;
    private static final long CONTENTION_PAUSE_MILLIS = 5;

    private final ProtocolParts parts;
    private final InFlightAnswers inFlight;
    private final RecoveryPhase recovery;
    private final InTransactionClaims claimsInTransaction;

    AdmissionPhase(ProtocolParts parts, InFlightAnswers inFlight, RecoveryPhase recovery) {
        this.parts = parts;
        this.inFlight = inFlight;
        this.recovery = recovery;
        this.claimsInTransaction = new InTransactionClaims(parts, inFlight);
    }

    /**
     * The operation's record as it is now: one read by primary key, outside any transaction. Every
     * decision starts from such a read; a claim is still made by INSERT, and its unique key decides races.
     *
     * @throws IdempotencyException 503 when the store cannot answer
     */
    public Optional<IdempotencyRecord> read(Operation op) {
        return parts.reads().read(op);
    }

    /**
     * The record under the first of {@code keys} that has one: a scope's key under the current secret, then
     * under the other accepted ones, which are read only while a rotation is under way.
     *
     * @throws IdempotencyException 503 when the store cannot answer
     */
    public Optional<IdempotencyRecord> read(List<String> keys) {
        return parts.reads().read(keys);
    }

    /**
     * Decides a request: a claim to execute, a stored outcome to replay, or a 202 for an in-flight one.
     *
     * @throws IdempotencyException for every rejection (mismatch, in flight, limits, store unavailable)
     */
    public Admission admit(Operation op) {
        long started = System.nanoTime();
        return admit(op, parts.reads().firstRead(op), started);
    }

    /**
     * {@link #admit(Operation)} on a record read just before ({@link #read}): a replay costs that read
     * alone; a new operation is claimed by INSERT, charged to its caller's limits in the same transaction.
     */
    public Admission admit(Operation op, Optional<IdempotencyRecord> lastRead) {
        return admit(op, lastRead, System.nanoTime());
    }

    private Admission admit(Operation op, Optional<IdempotencyRecord> lastRead, long started) {
        Admission admission;
        try {
            admission = decide(op, lastRead, 1);
        } catch (StoreUnavailableException e) {
            throw ProtocolAnswers.unavailable(e);
        }
        if (admission instanceof Admission.Replay) {
            parts.events().timed(ProtocolEvents.Step.REPLAY, op.policy().endpoint(), ProtocolEvents.since(started));
        }
        return admission;
    }

    /**
     * The read that starts a request's admission, and the answer it gives alone ({@link #answerWithoutClaim}):
     * empty when the request needs a claim, which then goes on from {@code record}.
     *
     * @throws IdempotencyException for a rejection, and 503 when the store cannot answer
     */
    public LookUp lookUp(Operation op) {
        long started = System.nanoTime();
        Optional<IdempotencyRecord> read = parts.reads().firstRead(op);
        return new LookUp(read, needsClaim(op, read) ? Optional.empty() : Optional.of(admit(op, read, started)));
    }

    /** What one read of an operation's record found, and the answer it gives without a claim, if any. */
    public record LookUp(Optional<IdempotencyRecord> record, Optional<Admission> answer) {
    }

    /**
     * The answer a read record gives without any claim: a replay, a 202, or a rejection (thrown). Empty
     * when the request needs a claim (no record, an expired one, a retryable failure, a lease run out) or
     * a replay needs the application ({@code storage = minimal}).
     */
    public Optional<Admission> answerWithoutClaim(Operation op, Optional<IdempotencyRecord> lastRead) {
        return needsClaim(op, lastRead) ? Optional.empty() : Optional.of(admit(op, lastRead));
    }

    private boolean needsClaim(Operation op, Optional<IdempotencyRecord> lastRead) {
        if (lastRead.isEmpty()) {
            return true;
        }
        IdempotencyRecord existing = lastRead.get();
        Instant now = parts.clock().instant();
        if (!existing.expiresAt().isAfter(now)) {
            return true;
        }
        boolean settledOutcome = existing.status().isReplayable() && op.policy().storage() != ResponseStorage.MINIMAL;
        // A bounded wait may end in a claim: the interceptor waits, where a claim can run.
        boolean running = existing.status() == RecordStatus.PROCESSING && op.policy().inFlight() != InFlightPolicy.WAIT
                && existing.leaseUntil().filter(now::isBefore).isPresent();
        return !settledOutcome && !running;
    }

    /**
     * After the business transaction of a claim in it ({@code ClaimMode.IN_TRANSACTION}) ended, committed or not: its
     * duplicates on this node no longer wait on it.
     */
    public void claimEnded(Claim claim) {
        claimsInTransaction.ended(claim);
    }

    /** How many operations this node claims in business transactions now. */
    int claimsInTransaction() {
        return claimsInTransaction.size();
    }

    private Admission decide(Operation requested, Optional<IdempotencyRecord> found, int round) {
        // A record found under another accepted secret's key is the operation's: it is changed where it is.
        Operation op = found.map(record -> requested.on(record.scopeKey())).orElse(requested);
        if (round > MAX_DECISION_ROUNDS) {
            throw parts.answers().keptChanging();
        }
        Instant now = parts.clock().instant();
        if (found.isEmpty()) {
            return claimNew(op, round);
        }
        IdempotencyRecord existing = found.get();
        if (!existing.expiresAt().isAfter(now)) {
            // An expired record is as if absent: a new operation under the same key, with its own fingerprint,
            // and limited like one.
            IdempotencyRecord fresh = parts.records().processing(op, parts.records().newToken(), 1, now, now);
            QuotaCharge charge = new QuotaCharge(existing.status() != RecordStatus.PROCESSING,
                    op.policy().maxInFlightPerPrincipal(), false, 0);
            return takeOver(op, existing, fresh, round, charge);
        }
        Fingerprinter.Match match = op.fingerprint().match(existing.requestHash());
        if (match == Fingerprinter.Match.RULES_UNKNOWN) {
            // Another node changed the endpoint's fingerprint rules and this one was not told (step 1 of the
            // change skipped): a 422 would call a retry a misuse; another node, or this one later, can tell.
            throw new IdempotencyException(Problem.of(ProblemType.FINGERPRINT_RULES_UNKNOWN,
                    "this key's request was fingerprinted under rules this server does not accept (a change of"
                            + " fingerprint rules is being rolled out); retry later").retryAfter(op.policy().retryAfterMax()));
        }
        if (match == Fingerprinter.Match.DIFFERENT) {
            parts.events().publish(new IdempotencyEvent.Mismatched(op.policy().endpoint(), op.scopeKey()));
            throw new IdempotencyException(Problem.of(ProblemType.FINGERPRINT_MISMATCH,
                    "this idempotency key was used for a different request; use a new key for a new request")
                    .withStatus(op.policy().mismatchStatus()));
        }
        return switch (existing.status()) {
            case SUCCEEDED, FAILED_FINAL -> parts.answers().replay(op, existing);
            case PROCESSING -> existing.leaseUntil().filter(now::isBefore).isPresent()
                    ? inFlight.answer(op, existing, now2 -> decide(op, now2, round + 1))
                    : takeOverAttempt(op, existing, round);
            case FAILED_RETRYABLE -> takeOverAttempt(op, existing, round);
        };
    }

    /** A claim by INSERT; its unique key decides between concurrent claims, its charge the caller's limits. */
    private Admission claimNew(Operation op, int round) {
        if (op.policy().claimInTransaction()) {
            Instant now = parts.clock().instant();
            IdempotencyRecord fresh = parts.records().processing(op, parts.records().newToken(), 1, now, now);
            return claimInTransaction(op, round, () -> {
                parts.store().insertInTransaction(fresh, op.aliasKeys(), op.policy().claimWaitSeconds());
                return true;
            }, () -> {
                parts.events().publish(new IdempotencyEvent.Claimed(op.policy().endpoint(), op.scopeKey()));
                return new Admission.Execute(new Claim(op, fresh.ownerToken(), 1, true));
            });
        }
        Instant now = parts.clock().instant();
        IdempotencyRecord fresh = parts.records().processing(op, parts.records().newToken(), 1, now, now);
        EndpointPolicy policy = op.policy();
        QuotaCharge charge = new QuotaCharge(true, policy.maxInFlightPerPrincipal(), true, policy.maxKeysPerEndpoint());
        long started = System.nanoTime();
        try {
            parts.transactions().requiresNew(() -> {
                parts.store().insert(fresh, charge, op.aliasKeys());
                return null;
            });
            parts.events().timed(ProtocolEvents.Step.CLAIM, policy.endpoint(), ProtocolEvents.since(started));
        } catch (DuplicateRecordException duplicate) {
            return decide(op, parts.reads().reread(op), round + 1);
        } catch (CommitOutcomeUnknownException unknown) {
            recovery.giveBack(new Claim(op, fresh.ownerToken(), 1));
            throw unknown;
        } catch (QuotaExceededException exceeded) {
            if (round < MAX_DECISION_ROUNDS && reconcile(op, exceeded.limit())) {
                return claimNew(op, round + 1);
            }
            throw parts.answers().limitReached(op, exceeded.limit());
        } catch (StoreUnavailableException e) {
            if (!e.isContention()) {
                throw e;
            }
            // Another transaction holds the row (MariaDB deadlock, H2 lock timeout): its record decides. With
            // no record, the row was the caller's counter, which the caller's other new operations are creating
            // or charging at the same moment (a burst of a new caller's first keys deadlocks on MariaDB); they
            // try again after a random pause, so that the same transactions do not meet again in step.
            Optional<IdempotencyRecord> found = parts.reads().reread(op);
            if (found.isEmpty() && round < MAX_DECISION_ROUNDS) {
                pauseAfterContention(round);
            }
            return decide(op, found, round + 1);
        }
        parts.events().publish(new IdempotencyEvent.Claimed(policy.endpoint(), op.scopeKey()));
        return new Admission.Execute(new Claim(op, fresh.ownerToken(), 1));
    }

    /** A claim written in the business transaction ({@link InTransactionClaims}); not made, the record decides again. */
    private Admission claimInTransaction(Operation op, int round, Supplier<Boolean> write, Supplier<Admission> made) {
        return claimsInTransaction.claim(op, write, made)
                // The first committed (or changed the record) while this one waited: its record decides.
                .orElseGet(() -> decide(op, parts.reads().reread(op), round + 1));
    }

    // At most 10, 20, 40 ms before the second, third, fourth attempt: short beside a request, long beside the
    // few statements that a claim holds its locks for.
    private static void pauseAfterContention(int round) {
        try {
            TimeUnit.MILLISECONDS.sleep(ThreadLocalRandom.current().nextLong(CONTENTION_PAUSE_MILLIS << round));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("interrupted while waiting to claim again after contention", e, false);
        }
    }

    // At a limit: the store makes room if records of the caller only look in use (a lease run out, expired).
    // Contention means other transactions of the caller are changing its records or counter right now (a
    // burst of new keys on MariaDB deadlocks the recount against their claims): the limit that was met
    // stands, so the caller is told about it (429 with Retry-After), not that the store is unavailable.
    private boolean reconcile(Operation op, QuotaExceededException.Limit limit) {
        Instant now = parts.clock().instant();
        try {
            return parts.transactions().requiresNew(() -> parts.store().reconcile(limit, op.scope().tenant(),
                    op.scope().principal(), op.policy().endpoint(), now));
        } catch (StoreUnavailableException e) {
            if (e.isContention()) {
                return false;
            }
            throw e;
        }
    }

    // Another attempt of the caller's own unexpired operation: counted, never limited (it adds nothing).
    private Admission takeOverAttempt(Operation op, IdempotencyRecord existing, int round) {
        Instant now = parts.clock().instant();
        IdempotencyRecord next = parts.records().processing(op, parts.records().newToken(), existing.attempts() + 1,
                existing.createdAt(), now);
        QuotaCharge charge = new QuotaCharge(existing.status() != RecordStatus.PROCESSING, 0, false, 0);
        return takeOver(op, existing, next, round, charge);
    }

    private Admission takeOver(Operation op, IdempotencyRecord existing, IdempotencyRecord next, int round,
                               QuotaCharge charge) {
        if (op.policy().claimInTransaction()) {
            return claimInTransaction(op, round, () -> parts.store().takeOverInTransaction(op.scopeKey(), existing.ownerToken(),
                    existing.status(), next, op.policy().claimWaitSeconds()), () -> tookOver(op, existing,
                    new Claim(op, next.ownerToken(), next.attempts())));
        }
        boolean won;
        long started = System.nanoTime();
        try {
            won = parts.transactions().requiresNew(() ->
                    parts.store().takeOver(op.scopeKey(), existing.ownerToken(), existing.status(), next, charge));
            parts.events().timed(ProtocolEvents.Step.CLAIM, op.policy().endpoint(), ProtocolEvents.since(started));
        } catch (QuotaExceededException exceeded) {
            if (round < MAX_DECISION_ROUNDS && reconcile(op, exceeded.limit())) {
                return decide(op, parts.reads().reread(op), round + 1);
            }
            throw parts.answers().limitReached(op, exceeded.limit());
        } catch (StoreUnavailableException e) {
            if (!e.isContention()) {
                throw e;
            }
            // Another transaction changed the record at the same moment (on a Galera cluster, another node's
            // takeover certified first, and this one's commit was refused): as a lost compare-and-set, its record
            // decides.
            won = false;
        }
        if (!won) {
            return decide(op, parts.reads().reread(op), round + 1);
        }
        return tookOver(op, existing, new Claim(op, next.ownerToken(), next.attempts()));
    }

    private Admission tookOver(Operation op, IdempotencyRecord existing, Claim claim) {
        parts.events().publish(new IdempotencyEvent.TakenOver(op.policy().endpoint(), op.scopeKey(), existing.status(),
                claim.attempt()));
        boolean earlierAttemptMayHaveActed = claim.attempt() > 1 && op.policy().externalSideEffects();
        if (earlierAttemptMayHaveActed && op.resolver().isPresent()) {
            return recovery.resolveEarlierAttempt(claim, existing);
        }
        return new Admission.Execute(claim);
    }
}
