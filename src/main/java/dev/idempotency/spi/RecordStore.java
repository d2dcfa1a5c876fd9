package dev.idempotency.spi;

import dev.idempotency.RecordStatus;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Where idempotency records live: the source of truth. Each method is one statement (or one short
 * read) and runs in the caller's transaction; the protocol decides which transaction that is.
 * Implementations translate their errors into {@link DuplicateRecordException} and
 * {@link StoreUnavailableException}; everything else is a bug.
 */
public interface RecordStore {

    /**
     * Inserts a new PROCESSING record and charges it to its caller's limits, atomically. The unique primary
     * key decides between concurrent claims, whatever the protocol read before.
     *
     * <p>While the server's secret is being rotated, the same operation may already have a record under another
     * key ({@code aliasKeys}: its scope digest under the other accepted secrets), and two nodes of different
     * secrets may claim it at once under two keys that no unique index compares. Then, after its own insert,
     * the claim takes a lock every claim of that caller and endpoint takes (its counter row) and looks for the
     * aliases; the second of two such claims waits for the first to commit and finds its record. The look
     * must read what is committed now (a current read), not an earlier snapshot (docs/adr/0008).
     *
     * @param aliasKeys the operation's keys under the other accepted secrets; empty outside a rotation
     * @throws DuplicateRecordException when a record with the same scope key, or one of the alias keys, exists
     * @throws QuotaExceededException   when the charge would pass a limit (the transaction must roll back)
     */
    void insert(IdempotencyRecord record, QuotaCharge charge, List<String> aliasKeys);

    /** {@link #insert(IdempotencyRecord, QuotaCharge, List)} outside a rotation. */
    default void insert(IdempotencyRecord record, QuotaCharge charge) {
        insert(record, charge, List.of());
    }

    /** {@link #insert(IdempotencyRecord, QuotaCharge)}, counted but never refused by a limit. */
    default void insert(IdempotencyRecord record) {
        insert(record, QuotaCharge.UNLIMITED);
    }

    /**
     * For a claim in the business transaction ({@code ClaimMode.IN_TRANSACTION}): inserts the PROCESSING record in
     * the caller's transaction, charged to nothing yet ({@link #finishInTransaction} charges the key, so that the
     * caller's counter rows are not locked while the method runs). A claim of the same key that has not ended yet
     * makes it wait, at most {@code waitSeconds}: if that one commits, this throws {@link DuplicateRecordException};
     * if it rolls back, this insert goes through.
     *
     * @throws DuplicateRecordException  when a record with the same scope key, or one of the alias keys, exists
     * @throws StoreUnavailableException with {@link StoreUnavailableException#isContention()} when the wait ran out;
     *                                   the transaction may no longer be usable and must roll back
     * @throws UnsupportedOperationException when this store cannot claim in the business transaction
     */
    default void insertInTransaction(IdempotencyRecord record, List<String> aliasKeys, int waitSeconds) {
        throw new UnsupportedOperationException(getClass().getName() + " does not claim in the business transaction");
    }

    /**
     * {@link #takeOver} for a claim in the business transaction: charged to nothing, and waiting at most
     * {@code waitSeconds} for a concurrent claim of the record to end.
     *
     * @throws StoreUnavailableException with {@link StoreUnavailableException#isContention()} when the wait ran out
     */
    default boolean takeOverInTransaction(String scopeKey, String expectedOwnerToken, RecordStatus expectedStatus,
                                          IdempotencyRecord replacement, int waitSeconds) {
        throw new UnsupportedOperationException(getClass().getName() + " does not claim in the business transaction");
    }

    /**
     * Ends an execution whose claim was written in this same transaction: the update fenced as {@link #finish}'s,
     * with the caller's charge of a new record's key ({@code charge.key()}); no in-flight unit was taken, so none is
     * given back.
     *
     * @param claimed the record as the claim wrote it (scope key, owner token, caller and endpoint)
     * @throws QuotaExceededException when the charge would pass the limit (the transaction must roll back)
     */
    default boolean finishInTransaction(IdempotencyRecord claimed, Completion completion, QuotaCharge charge) {
        throw new UnsupportedOperationException(getClass().getName() + " does not claim in the business transaction");
    }

    /**
     * What this store can do beyond what every store does; none by default. A store that implements the claims in
     * the business transaction, or {@link #list}, says so here.
     */
    default java.util.Set<StoreCapability> capabilities() {
        return java.util.Set.of();
    }

    /**
     * Whether a claim in the business transaction that has not committed yet makes a concurrent claim of the same key
     * wait for it, whichever node of the database the other claim runs on: true where one server decides the unique
     * key. False for a multi-primary cluster that certifies transactions at commit (MariaDB Galera): both claims go
     * on, and both methods run before one of them fails to commit. Endpoints that claim in the business transaction
     * are refused at deployment on a store that answers false.
     */
    default boolean uncommittedClaimsBlock() {
        return true;
    }

    /**
     * Keeps what an accepted asynchronous operation needs to run again with its claim (docs/adr/0020): only
     * {@code WHERE owner_token = ? AND status = 'PROCESSING'}, so that a claim taken over keeps nothing of its
     * former executor's. A takeover leaves it; the finish clears it, so a finished record holds no request data.
     *
     * @return false when the claim is no longer the caller's
     * @throws UnsupportedOperationException when this store cannot keep it ({@link StoreCapability#TASK_INPUT})
     */
    default boolean keepTaskInput(String scopeKey, String ownerToken, TaskInput input) {
        throw new UnsupportedOperationException(getClass().getName() + " does not keep task inputs");
    }

    /**
     * What {@link #keepTaskInput} kept with the PROCESSING record of that scope key and owner token; empty when
     * nothing was kept, or the record is no longer that claim's.
     *
     * @throws UnsupportedOperationException when this store cannot keep it ({@link StoreCapability#TASK_INPUT})
     */
    default Optional<TaskInput> findTaskInput(String scopeKey, String ownerToken) {
        throw new UnsupportedOperationException(getClass().getName() + " does not keep task inputs");
    }

    /** The record with that scope key, expired or not. */
    Optional<IdempotencyRecord> find(String scopeKey);

    /**
     * Replaces a record whose owner token and status are still the ones read, with a new PROCESSING
     * record (new owner token, lease, attempt count), and charges it to the caller's limits. A conditional
     * update: false when another executor changed the record first.
     *
     * @throws QuotaExceededException when the charge would pass a limit (the transaction must roll back)
     */
    boolean takeOver(String scopeKey, String expectedOwnerToken, RecordStatus expectedStatus,
                     IdempotencyRecord replacement, QuotaCharge charge);

    /** {@link #takeOver(String, String, RecordStatus, IdempotencyRecord, QuotaCharge)} without limits. */
    default boolean takeOver(String scopeKey, String expectedOwnerToken, RecordStatus expectedStatus,
                             IdempotencyRecord replacement) {
        return takeOver(scopeKey, expectedOwnerToken, expectedStatus, replacement,
                new QuotaCharge(expectedStatus != RecordStatus.PROCESSING, 0, false, 0));
    }

    /**
     * Ends an execution: updates the record only {@code WHERE owner_token = ? AND status = 'PROCESSING'},
     * and gives its caller's in-flight unit back in the same transaction. False means the executor was
     * fenced out and must not report success. Expiry never moves earlier than the claim set it.
     */
    boolean finish(String scopeKey, String ownerToken, Completion completion);

    /**
     * Moves the lease of a running execution to {@code leaseUntil}: only {@code WHERE owner_token = ? AND
     * status = 'PROCESSING' AND lease_until > now}, so that a lease that ran out (which a retry may be taking
     * over on what it read) is never revived. The expiry grows to at least {@code expiresAt} (the new lease's
     * end + retention), so that {@link #findProcessing} meets the record again when this lease runs out.
     * False when the execution no longer holds its lease.
     */
    boolean renewLease(String scopeKey, String ownerToken, Instant now, Instant leaseUntil, Instant expiresAt);

    /**
     * PROCESSING records by expiry, then scope key: those after ({@code expiresFrom}, {@code afterScopeKey})
     * — from {@code expiresFrom} inclusive when {@code afterScopeKey} is {@code ""} — and expiring before
     * {@code expiresBefore}; at most {@code limit}. A plain read: whoever acts on a record does it by a fenced
     * {@link #takeOver}. A PROCESSING record expires a fixed retention after its lease ends, so an expiry
     * window is a window of lease ends: the stuck-operation settler walks the expiry index with it.
     */
    List<IdempotencyRecord> findProcessing(Instant expiresFrom, String afterScopeKey, Instant expiresBefore,
                                           int limit);

    /**
     * Makes room under a limit that a claim met, if there is any to make: for {@code IN_FLIGHT} the caller's
     * PROCESSING records whose lease ran out become FAILED_RETRYABLE (fenced: their executors can no longer
     * finish), for {@code KEYS} the caller's expired finished records on the endpoint are deleted; then the
     * count is taken again. Scans the caller's records, so it runs only when a limit is met, and at most
     * once a second per caller and limit.
     *
     * @return true when the count went down, so that the claim is worth trying again
     */
    boolean reconcile(QuotaExceededException.Limit limit, String tenant, String principal, String endpoint,
                      Instant now);

    /**
     * An endpoint's records as an administrator looks for stuck ones: PROCESSING records whose lease ended before
     * {@code now} first, then by creation, oldest first; only records with one of {@code statuses} created at or
     * before {@code createdBefore}; at most {@code limit}. Not on any request's path: it may scan the endpoint's
     * records (no index is kept for it, so that claims pay nothing for it).
     *
     * @throws UnsupportedOperationException when this store cannot list (the admin resource answers 501)
     */
    default List<IdempotencyRecord> list(String endpoint, java.util.Set<RecordStatus> statuses, Instant createdBefore,
                                         Instant now, int limit) {
        throw new UnsupportedOperationException(getClass().getName() + " does not list records");
    }

    /**
     * Deletes at most {@code batchSize} records that expired before {@code now} and are not PROCESSING,
     * by primary key, and returns how many.
     */
    int purgeExpired(Instant now, int batchSize);
}
