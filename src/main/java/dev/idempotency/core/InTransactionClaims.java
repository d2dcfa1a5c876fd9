package dev.idempotency.core;

import dev.idempotency.spi.DuplicateRecordException;
import dev.idempotency.spi.StoreUnavailableException;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * This node's side of claims written in the business transaction ({@code ClaimMode.IN_TRANSACTION}): which keys it
 * holds until their transactions end, and how a concurrent duplicate on this node waits on the first's uncommitted
 * row — at most the endpoint's wait and only as one of the node's capped waiters; past either, the in-flight answer.
 */
final class InTransactionClaims {
    private final ClaimsOnThisNode holders = new ClaimsOnThisNode();
    private final ProtocolParts parts;
    private final InFlightAnswers inFlight;

    InTransactionClaims(ProtocolParts parts, InFlightAnswers inFlight) {
        this.parts = parts;
        this.inFlight = inFlight;
    }

    /**
     * Writes the claim ({@code write}: insert or takeover, true when made) and, once made, its admission ({@code made});
     * held on this node until {@link #ended}, given up at once if not made. Empty when not made: the first committed
     * or changed the record while this one waited, and the record decides.
     */
    Optional<Admission> claim(Operation op, Supplier<Boolean> write, Supplier<Admission> made) {
        String key = op.scopeKey();
        boolean duplicateHere = !holders.enter(key);
        boolean waiting = false;
        boolean claimed = false;
        try {
            if (duplicateHere && !(waiting = inFlight.tryWait(op))) {
                throw inFlight.stillRunningInTransaction(op);
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
                throw inFlight.stillRunningInTransaction(op);
            } finally {
                if (waiting) {
                    inFlight.endWait();
                }
            }
            parts.events().timed(ProtocolEvents.Step.CLAIM, op.policy().endpoint(), ProtocolEvents.since(started));
        } finally {
            if (!claimed) {
                holders.leave(key);
            }
        }
        if (!claimed) {
            return Optional.empty();
        }
        Admission admission;
        try {
            admission = made.get();
        } catch (RuntimeException | Error e) {
            holders.leave(key);
            throw e;
        }
        if (!(admission instanceof Admission.Execute)) {
            // Settled by asking the downstream, in the business transaction, which its caller commits: nothing runs.
            holders.leave(key);
        }
        return Optional.of(admission);
    }

    /** The business transaction of {@code claim} ended, committed or not: its duplicates here no longer wait on it. */
    void ended(Claim claim) {
        if (claim.inTransaction()) {
            holders.leave(claim.operation().scopeKey());
        }
    }

    /** How many operations this node claims in business transactions now. */
    int size() {
        return holders.size();
    }
}
