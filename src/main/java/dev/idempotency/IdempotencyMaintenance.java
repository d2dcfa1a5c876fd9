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

    /**
     * Settles operations stuck in PROCESSING — their lease ran out {@code idempotency.settle.after} ago and
     * no client retried — as the managed scheduler does every {@code idempotency.settle.interval}: each is
     * taken over (fenced), then completed with what its endpoint's {@code OutcomeResolver} found done
     * downstream, or made FAILED_RETRYABLE (a retry runs at once, retention removes it). One log line
     * (IDEM-W011) and one {@code IdempotencyEvent.Settled} per operation.
     *
     * @return how many operations were settled
     */
    int settleStuck();

    /**
     * Runs again, on this node, the accepted operations of asynchronous endpoints whose node died — PROCESSING,
     * their lease run out, within {@code idempotency.settle.after} — from the input their claims kept, as the
     * managed scheduler does every {@code idempotency.settle.accepted-interval} (docs/adr/0020). Each is taken over
     * (fenced: one node wins) and its method runs on the executor. One log line (IDEM-W027) per operation.
     *
     * @return how many operations were taken over to run again
     */
    int resumeAccepted();

    /**
     * How many deliveries of messages to an endpoint's listener were handled so, on this node since it started
     * (each also fired as an {@link IdempotencyEvent.MessageHandled}): executed, acknowledged as duplicates,
     * failed finally, rolled back for redelivery, dead-lettered, refused.
     */
    long messagesHandled(String endpoint, IdempotencyEvent.MessageHandled.Handling handling);
}
