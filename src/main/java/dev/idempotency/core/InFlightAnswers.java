package dev.idempotency.core;

import dev.idempotency.InFlightPolicy;
import dev.idempotency.spi.IdempotencyRecord;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The answer to a duplicate of an operation that still runs, as its endpoint's in-flight policy says: 409, 425, 202
 * with the record to point at, or a bounded wait for the first's outcome — by at most the node's capped number of
 * waiting threads, so that duplicates never pin the server's threads.
 */
final class InFlightAnswers {
    private static final long WAIT_POLL_MILLIS = 50;

    private final Semaphore waiters;
    private final RecordReads reads;
    private final ProtocolAnswers answers;

    InFlightAnswers(int maxWaiters, RecordReads reads, ProtocolAnswers answers) {
        this.waiters = new Semaphore(maxWaiters);
        this.reads = reads;
        this.answers = answers;
    }

    /**
     * The answer for a duplicate of {@code running}; under {@link InFlightPolicy#WAIT}, {@code decideAgain} decides on
     * the record once it has left PROCESSING within the wait.
     *
     * @throws dev.idempotency.IdempotencyException 409 or 425
     */
    Admission answer(Operation op, IdempotencyRecord running,
                     Function<Optional<IdempotencyRecord>, Admission> decideAgain) {
        EndpointPolicy policy = op.policy();
        Duration retryAfter = answers.retryAfter(op, running.leaseUntil());
        if (policy.inFlight() == InFlightPolicy.WAIT && tryWait(op)) {
            try {
                Optional<Admission> settled = awaitOutcome(op, decideAgain);
                if (settled.isPresent()) {
                    return settled.get();
                }
            } finally {
                waiters.release();
            }
        }
        if (policy.inFlight() == InFlightPolicy.ACCEPTED) {
            answers.inFlightRejected(op);
            return new Admission.Accepted(running, retryAfter);
        }
        throw answers.inFlight(op, retryAfter);
    }

    // Polls the record until it leaves PROCESSING or the bounded wait ends; the semaphore caps the threads.
    private Optional<Admission> awaitOutcome(Operation op, Function<Optional<IdempotencyRecord>, Admission> decideAgain) {
        long deadline = System.nanoTime() + op.policy().inFlightWait().toNanos();
        while (System.nanoTime() < deadline) {
            try {
                TimeUnit.MILLISECONDS.sleep(WAIT_POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            }
            Optional<IdempotencyRecord> now = reads.reread(op);
            if (now.isEmpty() || now.get().status() != dev.idempotency.RecordStatus.PROCESSING) {
                return Optional.of(decideAgain.apply(now));
            }
        }
        return Optional.empty();
    }

    /** One of the node's waiting places, for a duplicate that waits on a claim in the business transaction. */
    boolean tryWait(Operation op) {
        boolean placed = waiters.tryAcquire();
        if (placed) {
            answers.waiting(op);
        }
        return placed;
    }

    /** Gives a {@link #tryWait} place back. */
    void endWait() {
        waiters.release();
    }

    // The first holds the record in a transaction that has not ended: no PROCESSING record to point at, no lease.
    dev.idempotency.IdempotencyException stillRunningInTransaction(Operation op) {
        return answers.inFlight(op, answers.retryAfter(op, Optional.empty()));
    }
}
