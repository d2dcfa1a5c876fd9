package dev.idempotency.core;

import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.OutcomeCache;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.spi.StoreUnavailableException;

import java.time.Clock;
import java.util.List;
import java.util.Optional;

/**
 * How the protocol reads an operation's record: by primary key, outside any transaction, under each accepted key of
 * its scope; a finished outcome from the outcome cache first where the endpoint keeps one there.
 */
final class RecordReads {
    private final RecordStore store;
    private final OutcomeCache cache;
    private final TransactionBoundary transactions;
    private final Clock clock;
    private final ProtocolEvents events;

    RecordReads(RecordStore store, OutcomeCache cache, TransactionBoundary transactions, Clock clock,
                ProtocolEvents events) {
        this.store = store;
        this.cache = cache;
        this.transactions = transactions;
        this.clock = clock;
        this.events = events;
    }

    /**
     * The operation's record as it is now: one read by primary key, outside any transaction. Every decision starts
     * from such a read; a claim is still made by INSERT, and its unique key decides races.
     *
     * @throws dev.idempotency.IdempotencyException 503 when the store cannot answer
     */
    Optional<IdempotencyRecord> read(Operation op) {
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
    Optional<IdempotencyRecord> cachedOutcome(Operation op) {
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
    Optional<IdempotencyRecord> firstRead(Operation op) {
        return op.policy().claimInTransaction() ? cachedOutcome(op) : read(op);
    }

    private boolean isOutcomeOf(Operation op, IdempotencyRecord record) {
        return record.scopeKey().equals(op.scopeKey()) && record.tenant().equals(op.scope().tenant())
                && record.principal().equals(op.scope().principal())
                && record.endpoint().equals(op.policy().endpoint())
                && record.status().isReplayable() && record.expiresAt().isAfter(clock.instant());
    }

    /**
     * The record under the first of {@code keys} that has one: a scope's key under the current secret, then under
     * the other accepted ones, which are read only while a rotation is under way.
     *
     * @throws dev.idempotency.IdempotencyException 503 when the store cannot answer
     */
    Optional<IdempotencyRecord> read(List<String> keys) {
        try {
            return transactions.withoutTransaction(() -> findFirst(keys));
        } catch (StoreUnavailableException e) {
            throw ProtocolAnswers.unavailable(e);
        }
    }

    // A fresh read: under REPEATABLE READ the claim's snapshot would not see the winner's row.
    Optional<IdempotencyRecord> reread(Operation op) {
        return transactions.withoutTransaction(() -> findFirst(op.keys()));
    }

    /** The record under the scope's current key, read in a transaction of its own. */
    Optional<IdempotencyRecord> inOwnTransaction(String scopeKey) {
        return transactions.requiresNew(() -> store.find(scopeKey));
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
}
