package dev.idempotency.spi;

/**
 * What a {@link RecordStore} can do beyond what every store does. A store declares its capabilities
 * ({@link RecordStore#capabilities()}), so that the library refuses at deployment what the store cannot serve,
 * instead of finding out on a request.
 */
public enum StoreCapability {
    /**
     * Claims in the business transaction: {@link RecordStore#insertInTransaction},
     * {@link RecordStore#takeOverInTransaction} and {@link RecordStore#finishInTransaction}, which endpoints with
     * {@code claim = IN_TRANSACTION} need.
     */
    CLAIMS_IN_BUSINESS_TRANSACTION,
    /** {@link RecordStore#list}: the admin resource's listing of an endpoint's records. */
    LISTING_RECORDS,
    /**
     * {@link RecordStore#keepTaskInput} and {@link RecordStore#findTaskInput}: an accepted asynchronous operation
     * whose node died is run again by another node (docs/adr/0020); without it, it is given back for its client to
     * retry.
     */
    TASK_INPUT
}
