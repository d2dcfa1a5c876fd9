package dev.idempotency;

/**
 * Operations on the record table an application may call itself ({@code @Inject IdempotencyMaintenance}),
 * for instance from its own scheduler when the server has no managed scheduled executor.
 */
public interface IdempotencyMaintenance {

    /**
     * Deletes expired, finished records in batches of {@code idempotency.purge.batch-size}, by primary
     * key; never PROCESSING records, never unexpired ones. Business tables are untouched, so their
     * unique constraints keep rejecting a reused business key.
     *
     * @return how many records were deleted
     */
    int purgeExpired();
}
