package dev.idempotency.deployment;

import dev.idempotency.endpoints.IdempotentEndpoints;
import dev.idempotency.http.CapturedRequest;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.core.AdmissionPhase;
import dev.idempotency.core.KeyRules;
import dev.idempotency.core.RequestPreparation;
import dev.idempotency.core.ScopeDigest;
import dev.idempotency.spi.IdempotencyRecord;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * A caller's look-up of its own operation, for the status resource: its key scoped by the same resolver as its
 * requests (another caller's key lands in another scope), and, on an asynchronous endpoint, a bounded wait for it
 * to end.
 */
public final class StatusLookups {
    private static final long STATUS_POLL_MILLIS = 50;

    private final IdempotentEndpoints endpoints;
    private final KeyRules keyRules;
    private final RequestPreparation requests;
    private final ScopeDigest scopeDigest;
    private final AdmissionPhase admission;
    private final Clock clock;
    private final Semaphore waiters;

    public StatusLookups(IdempotentEndpoints endpoints, KeyRules keyRules, RequestPreparation requests,
                         ScopeDigest scopeDigest, AdmissionPhase admission, Clock clock, int maxWaiters) {
        this.endpoints = endpoints;
        this.keyRules = keyRules;
        this.requests = requests;
        this.scopeDigest = scopeDigest;
        this.admission = admission;
        this.clock = clock;
        this.waiters = new Semaphore(maxWaiters);
    }

    /** The scope of a status lookup: the same resolver, so another caller's key lands in another scope. */
    public Optional<IdempotencyRecord> findOwn(CapturedRequest request, String endpoint, String rawKey) {
        if (endpoints.named(endpoint).isEmpty()) {
            throw new IdempotencyException(Problem.of(ProblemType.OPERATION_NOT_FOUND, "no such endpoint"));
        }
        String key = keyRules.parse(rawKey);
        return admission.read(scopeDigest.keys(requests.scope(request, endpoint, key)))
                .filter(r -> r.expiresAt().isAfter(clock.instant()));
    }

    /**
     * {@link #findOwn}, and while the operation still runs, read again until it has ended or {@code wait} has
     * passed (a client's {@code Prefer: wait=N} on an asynchronous endpoint's status, RFC 7240): one read every
     * 50 ms, at most {@code idempotency.in-flight-max-waiters} requests waiting at once (the others are answered
     * with what the first read found). {@code whileAbsent}: also while there is no record yet (a message in its
     * queue).
     */
    public Optional<IdempotencyRecord> findOwnWaiting(CapturedRequest request, String endpoint, String rawKey,
                                                      Duration wait, boolean whileAbsent) {
        Optional<IdempotencyRecord> found = findOwn(request, endpoint, rawKey);
        if (wait.isZero() || !undecided(found, whileAbsent) || !waiters.tryAcquire()) {
            return found;
        }
        try {
            long deadline = System.nanoTime() + wait.toNanos();
            while (undecided(found, whileAbsent) && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(STATUS_POLL_MILLIS);
                found = findOwn(request, endpoint, rawKey);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            waiters.release();
        }
        return found;
    }

    private static boolean undecided(Optional<IdempotencyRecord> found, boolean whileAbsent) {
        return found.isEmpty() ? whileAbsent : found.get().status() == RecordStatus.PROCESSING;
    }
}
