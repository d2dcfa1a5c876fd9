package dev.idempotency.core;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.InFlightPolicy;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.QuotaExceededException;
import dev.idempotency.spi.StoreUnavailableException;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * The answers the protocol gives instead of running an operation: a replay of its outcome, and every problem it
 * refuses with (in flight, limits, superseded, store unavailable), each with its event and its {@code Retry-After}.
 */
public final class ProtocolAnswers {
    /** How long a client waits before it retries a request the store could not answer. */
    static final Duration STORE_RETRY_AFTER = Duration.ofSeconds(1);

    private final Clock clock;
    private final ProtocolEvents events;

    ProtocolAnswers(Clock clock, ProtocolEvents events) {
        this.clock = clock;
        this.events = events;
    }

    /** The 503 (with {@code Retry-After}) for a request the record store could not answer. */
    public static IdempotencyException unavailable(StoreUnavailableException e) {
        return new IdempotencyException(Problem.of(ProblemType.STORE_UNAVAILABLE,
                "the idempotency store is unavailable; retry").retryAfter(STORE_RETRY_AFTER), e);
    }

    /** The operation's stored outcome, replayed. */
    Admission.Replay replay(Operation op, IdempotencyRecord record) {
        events.publish(new IdempotencyEvent.Replayed(op.policy().endpoint(), op.scopeKey(), record.status()));
        return new Admission.Replay(record);
    }

    /** 429 at one of the caller's limits. */
    IdempotencyException limitReached(Operation op, QuotaExceededException.Limit limit) {
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

    /** 409 (425 under {@code in-flight = too-early}) for a duplicate of an operation that still runs. */
    IdempotencyException inFlight(Operation op, Duration retryAfter) {
        EndpointPolicy policy = op.policy();
        inFlightRejected(op);
        Problem problem = Problem.of(ProblemType.REQUEST_IN_FLIGHT,
                "a request with this idempotency key is still being processed; retry later").retryAfter(retryAfter);
        return new IdempotencyException(policy.inFlight() == InFlightPolicy.TOO_EARLY ? problem.withStatus(425) : problem);
    }

    /** The event of a duplicate answered while its operation still runs. */
    void inFlightRejected(Operation op) {
        EndpointPolicy policy = op.policy();
        events.publish(new IdempotencyEvent.InFlightRejected(policy.endpoint(), op.scopeKey(), policy.inFlight()));
    }

    /** The event of a duplicate that took one of the node's waiting places. */
    void waiting(Operation op) {
        events.publish(new IdempotencyEvent.WaitingForOutcome(op.policy().endpoint(), op.scopeKey()));
    }

    /**
     * 409 for an executor whose lease ran out and whose operation was taken over or released ({@code found}: its
     * record now, which holds no outcome for this request): in progress while another executor runs it, otherwise
     * (given back, or gone) nothing of it applied.
     */
    IdempotencyException superseded(Operation op, Optional<IdempotencyRecord> found) {
        boolean running = found.isPresent() && found.get().status() == RecordStatus.PROCESSING;
        return new IdempotencyException(Problem.of(ProblemType.SUPERSEDED,
                "this attempt's lease ran out and the operation was taken over or released; retry to get its outcome")
                .retryAfter(retryAfter(op, found.flatMap(IdempotencyRecord::leaseUntil)))
                .withState(running ? AnswerStates.IN_PROGRESS
                        : found.isPresent() && found.get().status() == RecordStatus.FAILED_RETRYABLE
                        ? AnswerStates.ofRecord(found.get(), op.policy().externalSideEffects())
                        : AnswerStates.NOT_APPLIED_SAME_KEY));
    }

    /** 503 for a record that kept changing under every decision. */
    IdempotencyException keptChanging() {
        return new IdempotencyException(Problem.of(ProblemType.STORE_UNAVAILABLE,
                "the operation's record kept changing; retry").retryAfter(STORE_RETRY_AFTER));
    }

    /** Until the lease ends, at least 1 s and at most the endpoint's {@code retry-after-max}. */
    Duration retryAfter(Operation op, Optional<Instant> leaseUntil) {
        Duration remaining = leaseUntil.map(until -> Duration.between(clock.instant(), until)).orElse(Duration.ZERO);
        if (remaining.isNegative() || remaining.isZero()) {
            remaining = Duration.ofSeconds(1);
        }
        return remaining.compareTo(op.policy().retryAfterMax()) > 0 ? op.policy().retryAfterMax() : remaining;
    }
}
