package dev.idempotency.core;

import java.util.Objects;

/**
 * The one place that decides what becomes of a run whose lease was lost (its renewal failed or the operation was
 * taken over while its method ran): nothing of it commits — its transaction is rolled back, or marked rollback-only
 * when joined — and its claim is given back unless another executor owns it now. The trigger then answers as for a
 * fenced-out run: the winner's outcome or 409 for a request or call, a redelivery for a message.
 */
public final class LeaseGuard {
    private final LeaseKeeper keeper;
    private final CommitSettlement settlement;

    public LeaseGuard(LeaseKeeper keeper, CommitSettlement settlement) {
        this.keeper = Objects.requireNonNull(keeper, "keeper");
        this.settlement = Objects.requireNonNull(settlement, "settlement");
    }

    /** Holds the claim's lease while its method runs in {@code tx}; closed when the method has returned. */
    public LeaseKeeper.Held hold(Claim claim, BusinessTransaction tx) {
        return keeper.hold(claim, tx);
    }

    /**
     * After the method returned: true when its lease was lost, and then the run is abandoned and its claim given back
     * (quietly: the lease bounds a claim that cannot be given back now).
     */
    public boolean abandonedIfLost(LeaseKeeper.Held held, BusinessTransaction tx) {
        if (!held.lost()) {
            return false;
        }
        settlement.nothingCommits(tx, held.claim());
        return true;
    }
}
