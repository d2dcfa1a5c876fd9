package dev.idempotency.spi;

import java.util.Optional;

/**
 * A fast copy of finished outcomes (SUCCEEDED, FAILED_FINAL), such as Redis: a replay read there costs no database
 * statement. Never the source of truth (design guide §7): the protocol reads it only where it would read a record to
 * replay, checks what it finds exactly as a record read from the database (scope, expiry, fingerprint), and decides
 * every claim on the database. An implementation never throws and never waits longer than its timeout: a cache that
 * cannot answer answers "absent", and the request goes to the database.
 */
public interface OutcomeCache {

    /** No cache: every read goes to the database. */
    OutcomeCache NONE = new OutcomeCache() {
        @Override
        public Optional<IdempotencyRecord> get(String scopeKey) {
            return Optional.empty();
        }

        @Override
        public void put(IdempotencyRecord finished) {
        }
    };

    /**
     * The finished record cached under {@code scopeKey}; empty when there is none, or when the cache cannot answer in
     * time (down, slow, unreadable entry).
     */
    Optional<IdempotencyRecord> get(String scopeKey);

    /**
     * Keeps a finished record, which has committed, until its {@link IdempotencyRecord#expiresAt()} at the latest; a
     * failure is swallowed (the next replay reads the database).
     */
    void put(IdempotencyRecord finished);
}
