package dev.idempotency.core;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.OutcomeResolver;
import dev.idempotency.spi.RecordStore;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Finds operations that are stuck — PROCESSING, their lease run out {@link #settleAfter} ago, no client
 * retrying — and has the protocol settle them ({@link RecoveryPhase#settle}), so that none stays
 * PROCESSING forever, held against its caller's limits and kept from the purge (design guide §5, §6).
 * Runs on the server's managed scheduler, on every node: each settlement is a fenced takeover, so one node
 * wins.
 *
 * <p>It needs no index of its own (a new one would cost every claim): a PROCESSING record expires one
 * retention after its lease ends (claims, takeovers and lease renewals keep it so), so the records whose lease
 * ended in a time window are the PROCESSING records in the same window shifted by the retention, found on the
 * expiry index the purge uses. Each pass walks, per retention of this deployment's endpoints, the window from
 * where the last pass stopped to now − {@code settleAfter} + retention: the records claimed since the last
 * pass, once. The first pass of a node looks back {@code lookBack}. Behind that, whatever still is PROCESSING
 * when it expires (stuck before the look-back, or of an endpoint no deployment serves any more) is settled
 * then, so that the purge can remove it.
 */
public final class Settler {
    private final IdempotencyProtocol protocol;
    private final RecordStore store;
    private final TransactionBoundary transactions;
    private final Clock clock;
    private final Map<String, Endpoint> endpoints;
    private final Duration settleAfter;
    private final Duration lookBack;
    private final int batchSize;
    // Where the next pass starts, per retention: the expiry and the scope key last seen.
    private final Map<Duration, Cursor> cursors = new HashMap<>();

    /** An endpoint this deployment serves, with its resolver when it has external side effects. */
    public record Endpoint(EndpointPolicy policy, Optional<OutcomeResolver> resolver) {
        public Endpoint {
            Objects.requireNonNull(policy, "policy");
            Objects.requireNonNull(resolver, "resolver");
        }
    }

    private record Cursor(Instant expiresAt, String scopeKey) {
    }

    /**
     * @param settleAfter how long after its lease ran out an operation counts as stuck (a retrying client
     *                    comes first)
     * @param lookBack    how far before its first window the first pass of this node looks
     */
    public Settler(IdempotencyProtocol protocol, RecordStore store, TransactionBoundary transactions, Clock clock,
                   Collection<Endpoint> endpoints, Duration settleAfter, Duration lookBack, int batchSize) {
        this.protocol = Objects.requireNonNull(protocol, "protocol");
        this.store = Objects.requireNonNull(store, "store");
        this.transactions = Objects.requireNonNull(transactions, "transactions");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.endpoints = new HashMap<>();
        for (Endpoint endpoint : endpoints) {
            this.endpoints.put(endpoint.policy().endpoint(), endpoint);
        }
        this.settleAfter = Objects.requireNonNull(settleAfter, "settleAfter");
        this.lookBack = Objects.requireNonNull(lookBack, "lookBack");
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be positive");
        }
        this.batchSize = batchSize;
    }

    /**
     * One pass: settles every operation that became stuck since the last pass, and every PROCESSING record
     * that has expired. One thread at a time (the scheduler's, or an application's own).
     *
     * @return the operations settled, for the caller to log
     */
    public synchronized List<IdempotencyEvent.Settled> settleDue() {
        List<IdempotencyEvent.Settled> settled = new ArrayList<>();
        Instant now = clock.instant();
        for (Duration retention : endpoints.values().stream().map(e -> e.policy().retention()).distinct().toList()) {
            Instant windowEnd = now.minus(settleAfter).plus(retention);
            Cursor cursor = cursors.getOrDefault(retention, new Cursor(windowEnd.minus(lookBack), ""));
            while (true) {
                Cursor from = cursor;
                List<IdempotencyRecord> page = transactions.withoutTransaction(() ->
                        store.findProcessing(from.expiresAt(), from.scopeKey(), windowEnd, batchSize));
                for (IdempotencyRecord found : page) {
                    Endpoint endpoint = endpoints.get(found.endpoint());
                    // Another retention's records pass through this window too; theirs is another window.
                    if (endpoint != null && endpoint.policy().retention().equals(retention)) {
                        protocol.recovery().settle(found, Optional.of(endpoint.policy()), endpoint.resolver())
                                .ifPresent(settled::add);
                    }
                    cursor = new Cursor(found.expiresAt(), found.scopeKey());
                }
                cursors.put(retention, cursor);
                if (page.size() < batchSize) {
                    break;
                }
            }
            // The window's end was exclusive: the next pass starts there.
            cursors.put(retention, new Cursor(windowEnd, ""));
        }
        settled.addAll(settleExpired(now));
        return settled;
    }

    /**
     * How many PROCESSING records have a lease that ran out (settled or not yet), counting at most {@code limit}
     * records on the expiry index: a PROCESSING record expires a retention after its lease ends, so those whose
     * lease may have ended come first there, before the running ones of the same retention.
     */
    public long countStuck(int limit) {
        Instant now = clock.instant();
        Duration longest = endpoints.values().stream().map(e -> e.policy().retention()).max(Duration::compareTo)
                .orElse(Duration.ZERO);
        long stuck = 0;
        int seen = 0;
        Cursor cursor = new Cursor(Instant.EPOCH, "");
        while (seen < limit) {
            Cursor from = cursor;
            int pageSize = Math.min(batchSize, limit - seen);
            List<IdempotencyRecord> page = transactions.withoutTransaction(() ->
                    store.findProcessing(from.expiresAt(), from.scopeKey(), now.plus(longest), pageSize));
            for (IdempotencyRecord found : page) {
                if (found.leaseUntil().map(until -> until.isBefore(now)).orElse(true)) {
                    stuck++;
                }
                cursor = new Cursor(found.expiresAt(), found.scopeKey());
            }
            seen += page.size();
            if (page.size() < pageSize) {
                break;
            }
        }
        return stuck;
    }

    // PROCESSING records past their expiry: their lease ended a whole retention ago.
    private List<IdempotencyEvent.Settled> settleExpired(Instant now) {
        List<IdempotencyEvent.Settled> settled = new ArrayList<>();
        Cursor cursor = new Cursor(Instant.EPOCH, "");
        while (true) {
            Cursor from = cursor;
            List<IdempotencyRecord> page = transactions.withoutTransaction(() ->
                    store.findProcessing(from.expiresAt(), from.scopeKey(), now, batchSize));
            for (IdempotencyRecord found : page) {
                Endpoint endpoint = endpoints.get(found.endpoint());
                protocol.recovery().settle(found, Optional.ofNullable(endpoint).map(Endpoint::policy),
                        Optional.ofNullable(endpoint).flatMap(Endpoint::resolver)).ifPresent(settled::add);
                cursor = new Cursor(found.expiresAt(), found.scopeKey());
            }
            if (page.size() < batchSize) {
                return settled;
            }
        }
    }
}
