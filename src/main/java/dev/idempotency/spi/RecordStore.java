package dev.idempotency.spi;

import dev.idempotency.RecordStatus;

import java.time.Instant;
import java.util.Optional;

/**
 * Where idempotency records live: the source of truth. Each method is one statement (or one short
 * read) and runs in the caller's transaction; the protocol decides which transaction that is.
 * Implementations translate their errors into {@link DuplicateRecordException} and
 * {@link StoreUnavailableException}; everything else is a bug.
 */
public interface RecordStore {

    /**
     * Inserts a new PROCESSING record. Never looks first: the unique primary key decides.
     *
     * @throws DuplicateRecordException when a record with the same scope key exists
     */
    void insert(IdempotencyRecord record);

    /** The record with that scope key, expired or not. */
    Optional<IdempotencyRecord> find(String scopeKey);

    /**
     * Replaces a record whose owner token and status are still the ones read, with a new PROCESSING
     * record (new owner token, lease, attempt count). A conditional update: false when another executor
     * changed the record first.
     */
    boolean takeOver(String scopeKey, String expectedOwnerToken, RecordStatus expectedStatus,
                     IdempotencyRecord replacement);

    /**
     * Ends an execution: updates the record only {@code WHERE owner_token = ? AND status = 'PROCESSING'}.
     * False means the executor was fenced out and must not report success.
     */
    boolean finish(String scopeKey, String ownerToken, Completion completion);

    /** How many unexpired PROCESSING records the principal has, counting at most {@code limit}. */
    int countInFlight(String tenant, String principal, Instant now, int limit);

    /** How many unexpired records the principal has on the endpoint, counting at most {@code limit}. */
    int countRetained(String tenant, String principal, String endpoint, Instant now, int limit);

    /**
     * Deletes at most {@code batchSize} records that expired before {@code now} and are not PROCESSING,
     * by primary key, and returns how many.
     */
    int purgeExpired(Instant now, int batchSize);
}
