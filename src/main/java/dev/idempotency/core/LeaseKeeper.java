package dev.idempotency.core;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.spi.RecordStore;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Keeps the leases of running executions alive, so that a method that runs longer than its lease is not
 * taken over by a retry and run a second time (design guide §5, §6). Off the request threads: the executions
 * register here, and {@link #renewDue()} — run on the server's managed scheduler every {@link #interval} —
 * moves every lease that is half gone one whole lease later, by a fenced update on the owner token that
 * only a lease that has not run out passes. An execution whose lease cannot be renewed (taken over, or not
 * renewed before it ran out, e.g. while the database was unreachable) is told so, and nothing of it
 * commits (the interceptor rolls it back when its method returns; a takeover fences its finish anyway). A
 * lease is renewed only while its transaction is active, so the transaction timeout still bounds how long a
 * stuck execution holds an operation.
 */
public final class LeaseKeeper {
    private final RecordStore store;
    private final TransactionBoundary transactions;
    private final Clock clock;
    private final ProtocolEvents events;
    private final Set<Held> held = ConcurrentHashMap.newKeySet();

    public LeaseKeeper(RecordStore store, TransactionBoundary transactions, Clock clock,
                       ProtocolEvents events) {
        this.store = Objects.requireNonNull(store, "store");
        this.transactions = Objects.requireNonNull(transactions, "transactions");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.events = Objects.requireNonNull(events, "events");
    }

    /** The running execution as the keeper sees it: its business transaction. */
    public interface Execution {
        /** Whether its transaction can still commit (not ended, not marked rollback-only). */
        boolean active();

        /** Its lease could not be held: it must not commit. Called once, on the keeper's thread. */
        void leaseLost();
    }

    /** How often {@link #renewDue()} must run for leases of this length: a quarter of the shortest. */
    public static Duration interval(Duration shortestLease) {
        Duration quarter = shortestLease.dividedBy(4);
        return quarter.compareTo(Duration.ofMillis(100)) < 0 ? Duration.ofMillis(100) : quarter;
    }

    /**
     * Registers an execution that has just claimed; its lease runs from now (the claim was made a moment
     * ago, so the keeper's idea of its end is, if anything, a little late — the margin is half a lease).
     */
    public Held hold(Claim claim, Execution execution) {
        Held h = new Held(claim, execution, clock.instant().plus(claim.operation().policy().lease()));
        // A claim in the business transaction is seen by nobody before that commits, and ends with it: nothing to
        // renew (a renewal in a transaction of its own would not even find the uncommitted row, and call it lost).
        if (!claim.inTransaction()) {
            held.add(h);
        }
        return h;
    }

    /**
     * {@link #hold(Claim, Execution)} for a run in {@code tx}: its lease is renewed while {@code tx} is active, and
     * {@link Held#lost()} tells afterwards whether it could not be held.
     */
    public Held hold(Claim claim, BusinessTransaction tx) {
        return hold(claim, new Execution() {
            @Override
            public boolean active() {
                return tx.active();
            }

            @Override
            public void leaseLost() {
                // Read by the run's thread once its method has returned (Held.lost()).
            }
        });
    }

    /** Renews every held lease that is half gone; runs on one thread at a time (the scheduler's). */
    public synchronized void renewDue() {
        for (Held h : held) {
            if (!h.execution.active()) {
                continue;
            }
            Duration lease = h.claim.operation().policy().lease();
            Instant now = clock.instant();
            if (Duration.between(now, h.leaseUntil).compareTo(lease.dividedBy(2)) > 0) {
                continue;
            }
            Instant next = now.plus(lease);
            boolean renewed;
            try {
                Instant expires = next.plus(h.claim.operation().policy().retention());
                renewed = transactions.requiresNew(() -> store.renewLease(h.claim.operation().scopeKey(),
                        h.claim.ownerToken(), now, next, expires));
            } catch (RuntimeException unavailable) {
                // Tried again at the next run, while the lease lasts.
                if (!now.isBefore(h.leaseUntil)) {
                    lose(h);
                }
                continue;
            }
            if (renewed) {
                h.leaseUntil = next;
            } else {
                lose(h);
            }
        }
    }

    /** How many executions are held now. */
    public int held() {
        return held.size();
    }

    private void lose(Held h) {
        if (held.remove(h)) {
            events.publish(new IdempotencyEvent.LeaseLost(h.claim.operation().policy().endpoint(),
                    h.claim.operation().scopeKey()));
            h.lost = true;
            h.execution.leaseLost();
        }
    }

    /** One held execution; closed when its method has returned (before the finish). */
    public final class Held implements AutoCloseable {
        private final Claim claim;
        private final Execution execution;
        private volatile Instant leaseUntil;
        private volatile boolean lost;

        private Held(Claim claim, Execution execution, Instant leaseUntil) {
            this.claim = claim;
            this.execution = execution;
            this.leaseUntil = leaseUntil;
        }

        /** The claim whose lease this is. */
        public Claim claim() {
            return claim;
        }

        /** Whether the lease could not be held (taken over, or not renewed in time): nothing of the run may commit. */
        public boolean lost() {
            return lost;
        }

        /** When the lease ends as last renewed. */
        public Instant leaseUntil() {
            return leaseUntil;
        }

        @Override
        public void close() {
            held.remove(this);
        }
    }
}
