package dev.idempotency.http;

import dev.idempotency.IdempotencyState;
import dev.idempotency.core.Claim;
import dev.idempotency.core.OutcomeClassification.FailureKind;
import dev.idempotency.core.TransactionEnd;
import dev.idempotency.core.Operation;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;

import java.util.Objects;
import java.util.Optional;

/**
 * Where one idempotent request stands. Every stage is immutable and holds exactly what is known at that
 * point; {@link IdempotentExchange} moves from one stage to the next:
 *
 * <pre>
 * Idle -> Unkeyed                                              (key optional and absent: runs unprotected)
 * Idle -> Prepared -> Read -> Settled                          (the request filter answered from the record)
 *                          -> Admitting -> Settled             (the interceptor's admission answered)
 *                                       -> Running -> Settled  (finished in our own transaction, released, fenced)
 *                                                  -> Failed -> Settled            (the response filter recorded it)
 *                                                  -> AwaitingCommit -> Settled    (the caller's transaction ended)
 * </pre>
 *
 * A stage with a claim that is not {@link Settled} when the request ends is settled by
 * {@link dev.idempotency.core.CommitSettlement#settleAbandoned}.
 */
public sealed interface ExchangeStage {

    /** The request, once the request filter captured it (null before). */
    default CapturedRequest request() {
        return null;
    }

    /**
     * The operation the interceptor (or the request filter's answer) took on; null while the request was
     * only prepared. A non-null value makes the application's {@code IdempotencyContext} active.
     */
    default Operation active() {
        return null;
    }

    /** The claim this request holds and still has to settle; empty when it holds none or has settled it. */
    default Optional<Claim> unsettledClaim() {
        return Optional.empty();
    }

    /** The attempt this request executes (1 for the first execution), 0 when it executes nothing. */
    default int attempt() {
        return 0;
    }

    /** Nothing captured yet: the request filter has not run, or the method is not idempotent. */
    record Idle() implements ExchangeStage {
    }

    /** The endpoint's key is optional and this request carries none: it runs unprotected. */
    record Unkeyed(CapturedRequest request) implements ExchangeStage {
        public Unkeyed {
            Objects.requireNonNull(request, "request");
        }
    }

    /** Key, scope and fingerprint are known; nothing was read yet. */
    record Prepared(CapturedRequest request, Operation operation) implements ExchangeStage {
        public Prepared {
            Objects.requireNonNull(request, "request");
            Objects.requireNonNull(operation, "operation");
        }
    }

    /** The request filter read the record (empty: there is none) and it did not answer alone. */
    record Read(CapturedRequest request, Operation operation, Optional<IdempotencyRecord> record)
            implements ExchangeStage {
        public Read {
            Objects.requireNonNull(request, "request");
            Objects.requireNonNull(operation, "operation");
            Objects.requireNonNull(record, "record");
        }
    }

    /** The interceptor took the operation on and admits it; nothing is claimed (yet). */
    record Admitting(CapturedRequest request, Operation operation) implements ExchangeStage {
        @Override
        public Operation active() {
            return operation;
        }
    }

    /** A stage in which the request holds a claim that it still has to settle. */
    sealed interface HoldingClaim extends ExchangeStage {
        Claim claim();

        @Override
        default Operation active() {
            return claim().operation();
        }

        @Override
        default Optional<Claim> unsettledClaim() {
            return Optional.of(claim());
        }

        @Override
        default int attempt() {
            return claim().attempt();
        }
    }

    /** Claimed: the business method runs under this claim. */
    record Running(CapturedRequest request, Claim claim) implements HoldingClaim {
    }

    /**
     * The business method, its finish or the commit of the library's own transaction threw: the response
     * filter records what the application's mappers make of it, as a failure of this kind.
     */
    record Failed(CapturedRequest request, Claim claim, FailureKind kind) implements HoldingClaim {
    }

    /**
     * Finished inside the caller's transaction: {@code first} goes out once that transaction has ended, as
     * {@code end} tells (reported by its synchronization, possibly from another thread).
     */
    record AwaitingCommit(CapturedRequest request, Claim claim, StoredResponse first, TransactionEnd end)
            implements HoldingClaim {
        AwaitingCommit ended(TransactionEnd how) {
            return new AwaitingCommit(request, claim, first, how);
        }
    }

    /**
     * Nothing more to record: the claim (if there was one) finished, was released or was fenced out. The
     * reply, when there is one, is what the response filter sends; without one, {@code state} is what the answer
     * that goes out instead (the application's own, for a failure it declared not to roll back) says, when the
     * exchange knows it (a problem the library raises carries its own).
     */
    record Settled(CapturedRequest request, Operation operation, int attempt, Optional<Reply> reply,
                   Optional<IdempotencyState> state) implements ExchangeStage {
        public Settled {
            Objects.requireNonNull(reply, "reply");
            Objects.requireNonNull(state, "state");
        }

        @Override
        public Operation active() {
            return operation;
        }
    }

    /** What the response filter sends: a stored outcome, whether it is a replay, and what it says. */
    record Reply(StoredResponse response, boolean replayed, IdempotencyState state) {
        public Reply {
            Objects.requireNonNull(response, "response");
            Objects.requireNonNull(state, "state");
        }
    }
}
