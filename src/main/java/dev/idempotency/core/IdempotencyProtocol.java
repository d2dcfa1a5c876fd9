package dev.idempotency.core;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.InFlightPolicy;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.ResponseStorage;
import dev.idempotency.RecordStatus;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.DuplicateRecordException;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.OutcomeCache;
import dev.idempotency.spi.OutcomeResolver;
import dev.idempotency.spi.QuotaCharge;
import dev.idempotency.spi.QuotaExceededException;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.spi.Resolution;
import dev.idempotency.spi.ResolutionRequest;
import dev.idempotency.spi.StoreUnavailableException;
import dev.idempotency.spi.StoredResponse;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;

/**
 * The protocol: claim by INSERT, decide on the existing record after a unique violation (never
 * check-then-insert), take over by compare-and-set on the owner token, finish by an update fenced on
 * the owner token. It knows no CDI, JAX-RS, JDBC or JTA; those are behind {@link RecordStore} and
 * {@link TransactionBoundary}.
 */
public final class IdempotencyProtocol {
    private static final int MAX_DECISION_ROUNDS = 4;
    private static final Duration STORE_RETRY_AFTER = Duration.ofSeconds(1);
    private static final long WAIT_POLL_MILLIS = 50;
    private static final long CONTENTION_PAUSE_MILLIS = 5;
    // How long the settler holds an operation of an endpoint it does not serve while it settles it.
    private static final Duration SETTLE_LEASE = Duration.ofMinutes(1);

    private final RecordStore store;
    private final OutcomeCache cache;
    private final TransactionBoundary transactions;
    private final Clock clock;
    private final RandomGenerator random;
    private final ProtocolEvents events;
    private final Semaphore waiters;
    private final ClaimsOnThisNode claimsInTransaction = new ClaimsOnThisNode();

    /**
     * @param random     source of owner tokens; must be a cryptographically strong generator in production
     * @param maxWaiters how many in-flight duplicates may wait at once under {@link InFlightPolicy#WAIT}
     */
    public IdempotencyProtocol(RecordStore store, TransactionBoundary transactions, Clock clock,
                               RandomGenerator random, ProtocolEvents events, int maxWaiters) {
        this(store, OutcomeCache.NONE, transactions, clock, random, events, maxWaiters);
    }

    /**
     * @param cache finished outcomes kept beside the store for replays (Redis): read where a replay would read the
     *              store, written after the commit of an outcome; never asked to decide a claim
     */
    public IdempotencyProtocol(RecordStore store, OutcomeCache cache, TransactionBoundary transactions, Clock clock,
                               RandomGenerator random, ProtocolEvents events, int maxWaiters) {
        this.cache = cache;
        this.store = store;
        this.transactions = transactions;
        this.clock = clock;
        this.random = random;
        this.events = events;
        this.waiters = new Semaphore(maxWaiters);
    }

    /**
     * The operation's record as it is now: one read by primary key, outside any transaction. Every
     * decision starts from such a read; a claim is still made by INSERT, and its unique key decides races.
     *
     * @throws IdempotencyException 503 when the store cannot answer
     */
    public Optional<IdempotencyRecord> read(Operation op) {
        Optional<IdempotencyRecord> cached = cachedOutcome(op);
        if (cached.isPresent()) {
            return cached;
        }
        Optional<IdempotencyRecord> found = read(op.keys());
        if (op.policy().cacheOutcomes()) {
            // Read through: the next retry of a finished operation is answered by the cache.
            found.filter(r -> isOutcomeOf(op, r)).ifPresent(cache::put);
        }
        return found;
    }

    // A cached outcome stands for the record only if it is this operation's, finished and not expired; it is then
    // judged as the database's record would be (its fingerprint against the request's: a mismatch is 422).
    private Optional<IdempotencyRecord> cachedOutcome(Operation op) {
        if (!op.policy().cacheOutcomes()) {
            return Optional.empty();
        }
        Optional<IdempotencyRecord> entry = cache.get(op.scopeKey());
        Optional<IdempotencyRecord> cached = entry.filter(r -> isOutcomeOf(op, r));
        events.cacheRead(op.policy().endpoint(), cached.isPresent() ? ProtocolEvents.CacheRead.HIT
                : entry.isPresent() ? ProtocolEvents.CacheRead.REFUSED : ProtocolEvents.CacheRead.MISS);
        return cached;
    }

    // The read an admission starts from. A claim in the business transaction reads the database with its INSERT
    // (ADR 14): that INSERT finds a committed record at once (conflict, then the record is read) and waits for one
    // that is not committed yet; a read before it would only cost a round trip and a commit on every new operation.
    private Optional<IdempotencyRecord> firstRead(Operation op) {
        return op.policy().claimInTransaction() ? cachedOutcome(op) : read(op);
    }

    private boolean isOutcomeOf(Operation op, IdempotencyRecord record) {
        return record.scopeKey().equals(op.scopeKey()) && record.tenant().equals(op.scope().tenant())
                && record.principal().equals(op.scope().principal())
                && record.endpoint().equals(op.policy().endpoint())
                && record.status().isReplayable() && record.expiresAt().isAfter(clock.instant());
    }

    /**
     * The record under the first of {@code keys} that has one: a scope's key under the current secret, then
     * under the other accepted ones, which are read only while a rotation is under way.
     *
     * @throws IdempotencyException 503 when the store cannot answer
     */
    public Optional<IdempotencyRecord> read(List<String> keys) {
        try {
            return transactions.withoutTransaction(() -> findFirst(keys));
        } catch (StoreUnavailableException e) {
            throw unavailable(e);
        }
    }

    private Optional<IdempotencyRecord> findFirst(List<String> keys) {
        for (String key : keys) {
            Optional<IdempotencyRecord> found = store.find(key);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /**
     * Decides a request: a claim to execute, a stored outcome to replay, or a 202 for an in-flight one.
     *
     * @throws IdempotencyException for every rejection (mismatch, in flight, limits, store unavailable)
     */
    public Admission admit(Operation op) {
        long started = System.nanoTime();
        return admit(op, firstRead(op), started);
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
            throw unavailable(e);
        }
        if (admission instanceof Admission.Replay) {
            events.timed(ProtocolEvents.Step.REPLAY, op.policy().endpoint(), since(started));
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
        Optional<IdempotencyRecord> read = firstRead(op);
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
        Instant now = clock.instant();
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
     * Ends an execution in the current (business) transaction: the conditional update that commits with
     * the business data. False means this executor was fenced out; the caller must roll back.
     */
    public boolean finish(Claim claim, RecordStatus status, Optional<StoredResponse> response,
                          Optional<String> resourceId) {
        Instant now = clock.instant();
        Completion completion = new Completion(status, resourceId, response, now,
                now.plus(claim.operation().policy().retention()));
        String endpoint = claim.operation().policy().endpoint();
        String scopeKey = claim.operation().scopeKey();
        boolean finished;
        long started = System.nanoTime();
        try {
            finished = claim.inTransaction()
                    ? store.finishInTransaction(claimed(claim, now), completion, new QuotaCharge(false, 0,
                            claim.newRecord(), claim.operation().policy().maxKeysPerEndpoint()))
                    : store.finish(scopeKey, claim.ownerToken(), completion);
        } catch (QuotaExceededException exceeded) {
            // The key of a claim in the business transaction is charged here: the transaction must roll back.
            throw limitReached(claim.operation(), exceeded.limit());
        } catch (StoreUnavailableException e) {
            throw unavailable(e);
        } finally {
            events.timed(ProtocolEvents.Step.FINISH, endpoint, since(started));
        }
        if (finished && status.isReplayable() && claim.operation().policy().cacheOutcomes()) {
            // Only once it has committed: a cached outcome of a transaction that rolled back would be a lie.
            IdempotencyRecord outcome = finishedRecord(claim, completion.status(), completion.resourceId(),
                    completion.response(), completion.updatedAt(), completion.expiresAt());
            transactions.afterCommit(() -> cache.put(outcome));
        }
        if (!finished) {
            events.publish(new IdempotencyEvent.Fenced(endpoint, scopeKey));
        } else if (status == RecordStatus.FAILED_RETRYABLE) {
            events.publish(new IdempotencyEvent.Released(endpoint, scopeKey, claim.attempt()));
        } else {
            events.publish(new IdempotencyEvent.Completed(endpoint, scopeKey, status, claim.attempt()));
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
            return transactions.requiresNew(() -> finish(claim, status, response, Optional.empty()));
        }
        if (status == RecordStatus.FAILED_RETRYABLE || !claim.newRecord()) {
            return true;
        }
        Operation op = claim.operation();
        EndpointPolicy policy = op.policy();
        Instant now = clock.instant();
        IdempotencyRecord failed = finishedRecord(claim, status, Optional.empty(), response, now,
                now.plus(policy.retention()));
        try {
            transactions.requiresNew(() -> {
                store.insert(failed, new QuotaCharge(false, 0, true, policy.maxKeysPerEndpoint()), op.aliasKeys());
                return null;
            });
        } catch (DuplicateRecordException | QuotaExceededException notRecorded) {
            return false;
        }
        events.publish(new IdempotencyEvent.Completed(policy.endpoint(), op.scopeKey(), status, claim.attempt()));
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
            if (!claim.inTransaction() && release(claim)) {
                return Optional.empty();
            }
            Optional<IdempotencyRecord> now = transactions.requiresNew(() -> store.find(claim.operation().scopeKey()));
            return now.filter(r -> r.status() == RecordStatus.SUCCEEDED && r.ownerToken().equals(claim.ownerToken()));
        } catch (StoreUnavailableException e) {
            throw unavailable(e);
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
            release(claim);
            found = transactions.requiresNew(() -> store.find(claim.operation().scopeKey()));
        } catch (StoreUnavailableException e) {
            throw unavailable(e);
        }
        if (found.isEmpty() || found.get().ownerToken().equals(claim.ownerToken())) {
            throw new IdempotencyException(Problem.of(ProblemType.STORE_UNAVAILABLE, "the database refused to commit"
                    + " this attempt for a conflict with a concurrent transaction: nothing was done; retry with the same"
                    + " key").retryAfter(STORE_RETRY_AFTER));
        }
        return afterFenced(claim.operation(), found);
    }

    /**
     * The answer for an executor that was fenced out: the winner's outcome if it has one, else 409.
     */
    public Admission.Replay afterFenced(Operation op) {
        return afterFenced(op, transactions.requiresNew(() -> store.find(op.scopeKey())));
    }

    private Admission.Replay afterFenced(Operation op, Optional<IdempotencyRecord> found) {
        if (found.isPresent() && found.get().status().isReplayable() && op.fingerprint().matches(found.get().requestHash())) {
            return replay(op, found.get());
        }
        throw new IdempotencyException(Problem.of(ProblemType.SUPERSEDED,
                "this attempt's lease ran out and the operation was taken over or released; retry to get its outcome")
                .retryAfter(retryAfter(op, found.flatMap(IdempotencyRecord::leaseUntil))));
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
        Instant now = clock.instant();
        Completion completion = new Completion(RecordStatus.FAILED_RETRYABLE, Optional.empty(), Optional.empty(), now,
                now.plus(retention));
        boolean released;
        try {
            released = transactions.requiresNew(() -> store.finish(seen.scopeKey(), seen.ownerToken(), completion));
        } catch (StoreUnavailableException e) {
            throw unavailable(e);
        }
        if (released) {
            events.publish(new IdempotencyEvent.Released(seen.endpoint(), seen.scopeKey(), seen.attempts()));
        }
        return released;
    }

    /** Deletes expired, finished records in batches of {@code batchSize}; at most {@code maxBatches}. */
    public int purgeExpired(int batchSize, int maxBatches) {
        int total = 0;
        for (int i = 0; i < maxBatches; i++) {
            Instant now = clock.instant();
            int deleted = transactions.requiresNew(() -> store.purgeExpired(now, batchSize));
            total += deleted;
            if (deleted < batchSize) {
                break;
            }
        }
        if (total > 0) {
            events.publish(new IdempotencyEvent.Purged("", total));
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
        Instant now = clock.instant();
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
        String token = newToken();
        IdempotencyRecord settling = new IdempotencyRecord(stuck.scopeKey(), stuck.tenant(), stuck.principal(),
                stuck.endpoint(), stuck.requestHash(), RecordStatus.PROCESSING, Optional.empty(), Optional.empty(),
                token, Optional.of(leaseUntil), stuck.attempts(), stuck.createdAt(), now, expiresAt);
        boolean won = transactions.requiresNew(() -> store.takeOver(stuck.scopeKey(), stuck.ownerToken(),
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
        Instant ended = clock.instant();
        Completion completion = new Completion(status, done.flatMap(Resolution.Done::resourceId),
                done.map(Resolution.Done::response), ended,
                serving.map(p -> ended.plus(p.retention())).orElse(stuck.expiresAt()));
        if (!transactions.requiresNew(() -> store.finish(stuck.scopeKey(), token, completion))) {
            // Only another settler or a retry that took over our fresh lease after it ran out gets here.
            return Optional.empty();
        }
        IdempotencyEvent.Settled settled = new IdempotencyEvent.Settled(stuck.endpoint(), stuck.scopeKey(), status, how);
        events.publish(settled);
        return Optional.of(settled);
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

    private Admission decide(Operation requested, Optional<IdempotencyRecord> found, int round) {
        // A record found under another accepted secret's key is the operation's: it is changed where it is.
        Operation op = found.map(record -> requested.on(record.scopeKey())).orElse(requested);
        if (round > MAX_DECISION_ROUNDS) {
            throw new IdempotencyException(Problem.of(ProblemType.STORE_UNAVAILABLE,
                    "the operation's record kept changing; retry").retryAfter(STORE_RETRY_AFTER));
        }
        Instant now = clock.instant();
        if (found.isEmpty()) {
            return claimNew(op, round);
        }
        IdempotencyRecord existing = found.get();
        if (!existing.expiresAt().isAfter(now)) {
            // An expired record is as if absent: a new operation under the same key, with its own fingerprint,
            // and limited like one.
            IdempotencyRecord fresh = processing(op, newToken(), 1, now, now);
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
            events.publish(new IdempotencyEvent.Mismatched(op.policy().endpoint(), op.scopeKey()));
            throw new IdempotencyException(Problem.of(ProblemType.FINGERPRINT_MISMATCH,
                    "this idempotency key was used for a different request; use a new key for a new request")
                    .withStatus(op.policy().mismatchStatus()));
        }
        return switch (existing.status()) {
            case SUCCEEDED, FAILED_FINAL -> replay(op, existing);
            case PROCESSING -> existing.leaseUntil().filter(now::isBefore).isPresent()
                    ? inFlight(op, existing, round)
                    : takeOverAttempt(op, existing, round);
            case FAILED_RETRYABLE -> takeOverAttempt(op, existing, round);
        };
    }

    /**
     * After the business transaction of a claim in it ({@code ClaimMode.IN_TRANSACTION}) ended, committed or not: its
     * duplicates on this node no longer wait on it.
     */
    public void claimEnded(Claim claim) {
        if (claim.inTransaction()) {
            claimsInTransaction.leave(claim.operation().scopeKey());
        }
    }

    /** How many operations this node claims in business transactions now. */
    int claimsInTransaction() {
        return claimsInTransaction.size();
    }

    /**
     * A claim written in the business transaction (insert or takeover): a concurrent duplicate waits on the
     * first's uncommitted row, at most the endpoint's wait and only as one of the node's capped waiters; past either,
     * it gets the in-flight answer. Held on this node until {@link #claimEnded}; given up at once if not made.
     */
    private Admission claimInTransaction(Operation op, int round, java.util.function.Supplier<Boolean> write,
                                         java.util.function.Supplier<Admission> made) {
        String key = op.scopeKey();
        boolean duplicateHere = !claimsInTransaction.enter(key);
        boolean waiting = false;
        boolean claimed = false;
        try {
            if (duplicateHere && !(waiting = waiters.tryAcquire())) {
                throw stillRunningInTransaction(op);
            }
            long started = System.nanoTime();
            try {
                claimed = write.get();
            } catch (DuplicateRecordException duplicate) {
                claimed = false;
            } catch (StoreUnavailableException e) {
                if (!e.isContention()) {
                    throw e;
                }
                throw stillRunningInTransaction(op);
            } finally {
                if (waiting) {
                    waiters.release();
                }
            }
            events.timed(ProtocolEvents.Step.CLAIM, op.policy().endpoint(), since(started));
        } finally {
            if (!claimed) {
                claimsInTransaction.leave(key);
            }
        }
        if (!claimed) {
            // The first committed (or changed the record) while this one waited: its record decides.
            return decide(op, reread(op), round + 1);
        }
        Admission admission;
        try {
            admission = made.get();
        } catch (RuntimeException | Error e) {
            claimsInTransaction.leave(key);
            throw e;
        }
        if (!(admission instanceof Admission.Execute)) {
            // Settled by asking the downstream, in the business transaction, which its caller commits: nothing runs.
            claimsInTransaction.leave(key);
        }
        return admission;
    }

    // The first holds the record in a transaction that has not ended: no PROCESSING record to point at, no lease.
    private IdempotencyException stillRunningInTransaction(Operation op) {
        EndpointPolicy policy = op.policy();
        events.publish(new IdempotencyEvent.InFlightRejected(policy.endpoint(), op.scopeKey(), policy.inFlight()));
        Problem problem = Problem.of(ProblemType.REQUEST_IN_FLIGHT,
                "a request with this idempotency key is still being processed; retry later")
                .retryAfter(retryAfter(op, Optional.empty()));
        return new IdempotencyException(policy.inFlight() == InFlightPolicy.TOO_EARLY ? problem.withStatus(425) : problem);
    }

    /** A claim by INSERT; its unique key decides between concurrent claims, its charge the caller's limits. */
    private Admission claimNew(Operation op, int round) {
        if (op.policy().claimInTransaction()) {
            Instant now = clock.instant();
            IdempotencyRecord fresh = processing(op, newToken(), 1, now, now);
            return claimInTransaction(op, round, () -> {
                store.insertInTransaction(fresh, op.aliasKeys(), op.policy().claimWaitSeconds());
                return true;
            }, () -> {
                events.publish(new IdempotencyEvent.Claimed(op.policy().endpoint(), op.scopeKey()));
                return new Admission.Execute(new Claim(op, fresh.ownerToken(), 1, true));
            });
        }
        Instant now = clock.instant();
        IdempotencyRecord fresh = processing(op, newToken(), 1, now, now);
        EndpointPolicy policy = op.policy();
        QuotaCharge charge = new QuotaCharge(true, policy.maxInFlightPerPrincipal(), true, policy.maxKeysPerEndpoint());
        long started = System.nanoTime();
        try {
            transactions.requiresNew(() -> {
                store.insert(fresh, charge, op.aliasKeys());
                return null;
            });
            events.timed(ProtocolEvents.Step.CLAIM, policy.endpoint(), since(started));
        } catch (DuplicateRecordException duplicate) {
            return decide(op, reread(op), round + 1);
        } catch (CommitOutcomeUnknownException unknown) {
            giveBack(new Claim(op, fresh.ownerToken(), 1));
            throw unknown;
        } catch (QuotaExceededException exceeded) {
            if (round < MAX_DECISION_ROUNDS && reconcile(op, exceeded.limit())) {
                return claimNew(op, round + 1);
            }
            throw limitReached(op, exceeded.limit());
        } catch (StoreUnavailableException e) {
            if (!e.isContention()) {
                throw e;
            }
            // Another transaction holds the row (MariaDB deadlock, H2 lock timeout): its record decides. With
            // no record, the row was the caller's counter, which the caller's other new operations are creating
            // or charging at the same moment (a burst of a new caller's first keys deadlocks on MariaDB); they
            // try again after a random pause, so that the same transactions do not meet again in step.
            Optional<IdempotencyRecord> found = reread(op);
            if (found.isEmpty() && round < MAX_DECISION_ROUNDS) {
                pauseAfterContention(round);
            }
            return decide(op, found, round + 1);
        }
        events.publish(new IdempotencyEvent.Claimed(policy.endpoint(), op.scopeKey()));
        return new Admission.Execute(new Claim(op, fresh.ownerToken(), 1));
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

    // A fresh read: under REPEATABLE READ the claim's snapshot would not see the winner's row.
    private Optional<IdempotencyRecord> reread(Operation op) {
        return transactions.withoutTransaction(() -> findFirst(op.keys()));
    }

    // At a limit: the store makes room if records of the caller only look in use (a lease run out, expired).
    // Contention means other transactions of the caller are changing its records or counter right now (a
    // burst of new keys on MariaDB deadlocks the recount against their claims): the limit that was met
    // stands, so the caller is told about it (429 with Retry-After), not that the store is unavailable.
    private boolean reconcile(Operation op, QuotaExceededException.Limit limit) {
        Instant now = clock.instant();
        try {
            return transactions.requiresNew(() -> store.reconcile(limit, op.scope().tenant(),
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
        Instant now = clock.instant();
        IdempotencyRecord next = processing(op, newToken(), existing.attempts() + 1, existing.createdAt(), now);
        QuotaCharge charge = new QuotaCharge(existing.status() != RecordStatus.PROCESSING, 0, false, 0);
        return takeOver(op, existing, next, round, charge);
    }

    private Admission takeOver(Operation op, IdempotencyRecord existing, IdempotencyRecord next, int round,
                               QuotaCharge charge) {
        if (op.policy().claimInTransaction()) {
            return claimInTransaction(op, round, () -> store.takeOverInTransaction(op.scopeKey(), existing.ownerToken(),
                    existing.status(), next, op.policy().claimWaitSeconds()), () -> tookOver(op, existing,
                    new Claim(op, next.ownerToken(), next.attempts())));
        }
        boolean won;
        long started = System.nanoTime();
        try {
            won = transactions.requiresNew(() ->
                    store.takeOver(op.scopeKey(), existing.ownerToken(), existing.status(), next, charge));
            events.timed(ProtocolEvents.Step.CLAIM, op.policy().endpoint(), since(started));
        } catch (QuotaExceededException exceeded) {
            if (round < MAX_DECISION_ROUNDS && reconcile(op, exceeded.limit())) {
                return decide(op, reread(op), round + 1);
            }
            throw limitReached(op, exceeded.limit());
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
            return decide(op, reread(op), round + 1);
        }
        return tookOver(op, existing, new Claim(op, next.ownerToken(), next.attempts()));
    }

    private Admission tookOver(Operation op, IdempotencyRecord existing, Claim claim) {
        events.publish(new IdempotencyEvent.TakenOver(op.policy().endpoint(), op.scopeKey(), existing.status(),
                claim.attempt()));
        boolean earlierAttemptMayHaveActed = claim.attempt() > 1 && op.policy().externalSideEffects();
        if (earlierAttemptMayHaveActed && op.resolver().isPresent()) {
            return resolveEarlierAttempt(claim, existing);
        }
        return new Admission.Execute(claim);
    }

    private Admission resolveEarlierAttempt(Claim claim, IdempotencyRecord previous) {
        Operation op = claim.operation();
        Resolution resolution = ask(op.resolver().orElseThrow(),
                new ResolutionRequest(Optional.of(op.scope()), previous, op::derive));
        if (resolution instanceof Resolution.Done done) {
            if (claim.inTransaction()) {
                // Recorded in the business transaction, which its caller commits (it holds our uncommitted claim, so
                // a transaction of its own would wait on it).
                if (!finish(claim, RecordStatus.SUCCEEDED, Optional.of(done.response()), done.resourceId())) {
                    return afterFenced(op);
                }
                Instant now = clock.instant();
                return replay(op, finishedRecord(claim, RecordStatus.SUCCEEDED, done.resourceId(),
                        Optional.of(done.response()), now, now.plus(op.policy().retention())));
            }
            if (!finishAlone(claim, RecordStatus.SUCCEEDED, Optional.of(done.response()))) {
                return afterFenced(op);
            }
            IdempotencyRecord completed = transactions.requiresNew(() -> store.find(op.scopeKey())).orElseThrow();
            return replay(op, completed);
        }
        if (resolution instanceof Resolution.Unknown unknown) {
            release(claim);
            throw new IdempotencyException(Problem.of(ProblemType.STORE_UNAVAILABLE,
                    "the outcome of an earlier attempt is not known yet: " + unknown.reason())
                    .retryAfter(op.policy().retryAfterMax()));
        }
        return new Admission.Execute(claim);
    }

    private Admission inFlight(Operation op, IdempotencyRecord running, int round) {
        EndpointPolicy policy = op.policy();
        Duration retryAfter = retryAfter(op, running.leaseUntil());
        if (policy.inFlight() == InFlightPolicy.WAIT && waiters.tryAcquire()) {
            try {
                Optional<Admission> settled = awaitOutcome(op, round);
                if (settled.isPresent()) {
                    return settled.get();
                }
            } finally {
                waiters.release();
            }
        }
        events.publish(new IdempotencyEvent.InFlightRejected(policy.endpoint(), op.scopeKey(), policy.inFlight()));
        if (policy.inFlight() == InFlightPolicy.ACCEPTED) {
            return new Admission.Accepted(running, retryAfter);
        }
        Problem problem = Problem.of(ProblemType.REQUEST_IN_FLIGHT,
                "a request with this idempotency key is still being processed; retry later").retryAfter(retryAfter);
        throw new IdempotencyException(policy.inFlight() == InFlightPolicy.TOO_EARLY ? problem.withStatus(425) : problem);
    }

    // Polls the record until it leaves PROCESSING or the bounded wait ends; the semaphore caps the threads.
    private Optional<Admission> awaitOutcome(Operation op, int round) {
        long deadline = System.nanoTime() + op.policy().inFlightWait().toNanos();
        while (System.nanoTime() < deadline) {
            try {
                TimeUnit.MILLISECONDS.sleep(WAIT_POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            }
            Optional<IdempotencyRecord> now = reread(op);
            if (now.isEmpty() || now.get().status() != RecordStatus.PROCESSING) {
                return Optional.of(decide(op, now, round + 1));
            }
        }
        return Optional.empty();
    }

    private Admission.Replay replay(Operation op, IdempotencyRecord record) {
        events.publish(new IdempotencyEvent.Replayed(op.policy().endpoint(), op.scopeKey(), record.status()));
        return new Admission.Replay(record);
    }

    private IdempotencyException limitReached(Operation op, QuotaExceededException.Limit limit) {
        EndpointPolicy policy = op.policy();
        ProblemType exceeded = limit == QuotaExceededException.Limit.IN_FLIGHT
                ? ProblemType.TOO_MANY_IN_FLIGHT : ProblemType.TOO_MANY_KEYS;
        events.publish(new IdempotencyEvent.LimitReached(policy.endpoint(), op.scopeKey(), exceeded));
        Duration retryAfter = exceeded == ProblemType.TOO_MANY_IN_FLIGHT ? policy.lease() : policy.retryAfterMax();
        return new IdempotencyException(Problem.of(exceeded, exceeded == ProblemType.TOO_MANY_IN_FLIGHT
                ? "too many operations of this caller are in progress; retry when one has finished"
                : "this caller holds too many idempotency keys for this endpoint; retry later")
                .retryAfter(retryAfter));
    }

    private Duration retryAfter(Operation op, Optional<Instant> leaseUntil) {
        Duration remaining = leaseUntil.map(until -> Duration.between(clock.instant(), until)).orElse(Duration.ZERO);
        if (remaining.isNegative() || remaining.isZero()) {
            remaining = Duration.ofSeconds(1);
        }
        return remaining.compareTo(op.policy().retryAfterMax()) > 0 ? op.policy().retryAfterMax() : remaining;
    }

    // The claim's record as a finish leaves it (its creation time is not known here, nor needed by a replay).
    private static IdempotencyRecord finishedRecord(Claim claim, RecordStatus status, Optional<String> resourceId,
                                                    Optional<StoredResponse> response, Instant at, Instant expiresAt) {
        Operation op = claim.operation();
        return new IdempotencyRecord(op.scopeKey(), op.scope().tenant(), op.scope().principal(), op.policy().endpoint(),
                op.fingerprint().stored(), status, resourceId, response, claim.ownerToken(), Optional.empty(),
                claim.attempt(), at, at, expiresAt);
    }

    // The record as a claim in the business transaction wrote it: what its finish is fenced and charged on.
    private IdempotencyRecord claimed(Claim claim, Instant now) {
        return processing(claim.operation(), claim.ownerToken(), claim.attempt(), now, now);
    }

    private IdempotencyRecord processing(Operation op, String token, int attempt, Instant createdAt, Instant now) {
        EndpointPolicy policy = op.policy();
        return new IdempotencyRecord(op.scopeKey(), op.scope().tenant(), op.scope().principal(), policy.endpoint(),
                op.fingerprint().stored(), RecordStatus.PROCESSING, Optional.empty(), Optional.empty(), token,
                Optional.of(now.plus(policy.lease())), attempt, createdAt, now,
                now.plus(policy.lease()).plus(policy.retention()));
    }

    /**
     * A claim whose commit may or may not have happened is handed back by the fenced update (our token,
     * still PROCESSING), so that the client's retry takes over at once instead of waiting out the lease.
     * If that fails too, the lease bounds it.
     */
    private void giveBack(Claim claim) {
        try {
            settleUnknownCommit(claim);
        } catch (RuntimeException stillUnreachable) {
            // The caller answers 503 either way; the claim, if it exists, ends with its lease.
        }
    }

    private static Duration since(long startedNanos) {
        return Duration.ofNanos(System.nanoTime() - startedNanos);
    }

    private String newToken() {
        byte[] bytes = new byte[16];
        random.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** The 503 (with {@code Retry-After}) for a request the record store could not answer. */
    public static IdempotencyException unavailable(StoreUnavailableException e) {
        return new IdempotencyException(Problem.of(ProblemType.STORE_UNAVAILABLE,
                "the idempotency store is unavailable; retry").retryAfter(STORE_RETRY_AFTER), e);
    }
}
