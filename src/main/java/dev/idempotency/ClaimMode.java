package dev.idempotency;

/**
 * Where an endpoint's claim of a new operation is written, and so what a new operation costs.
 */
public enum ClaimMode {
    /** Take {@code idempotency.claim} (itself {@link #OWN_TRANSACTION} by default). */
    CONFIGURED,
    /**
     * The claim commits in a transaction of its own before the method runs, and the outcome commits with the
     * business data: two commits per new operation. The operation is visible as PROCESSING while it runs
     * (duplicates are answered at once, 202 and the status resource work, a crashed node's operation is taken
     * over after its lease).
     */
    OWN_TRANSACTION,
    /**
     * The claim's {@code INSERT} joins the business transaction: one commit per new operation (docs/adr/0014).
     * Nothing is visible while the method runs: a concurrent duplicate waits on the record's unique key until the
     * first commits (it is then replayed) or rolls back (it then runs), at most {@code idempotency.in-flight-wait}
     * (whole seconds, at least one), after which it gets the in-flight answer ({@code 409} or {@code 425}). At
     * most {@code idempotency.in-flight-max-waiters} duplicates wait at once on a node, each holding a connection;
     * the others get the in-flight answer at once. A crash rolls the claim back with the business data, so no
     * lease is held or renewed. Not for asynchronous endpoints, {@link InFlightPolicy#ACCEPTED}, message
     * listeners or business methods (the deployment fails, IDEM-D019). The per-caller limit of stored keys is
     * charged when the operation finishes; the in-flight limit does not count these operations.
     */
    IN_TRANSACTION
}
