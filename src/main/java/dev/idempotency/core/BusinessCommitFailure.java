package dev.idempotency.core;

/**
 * A commit (or begin) of a transaction that failed: {@link #rolledBack()} tells whether its outcome is known to be
 * nothing, {@link #conflict()} whether the database refused it for a conflict with another transaction.
 */
public class BusinessCommitFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final boolean rolledBack;

    public BusinessCommitFailure(String message, Throwable cause, boolean rolledBack) {
        super(message, cause);
        this.rolledBack = rolledBack;
    }

    /** Whether it rolled back (nothing committed); false when its outcome is unknown. */
    public boolean rolledBack() {
        return rolledBack;
    }

    /**
     * Whether the database refused the commit for a conflict with another transaction (a serialization failure or
     * deadlock at commit) rather than for something of the application's. Only the adapter that committed can tell;
     * false here.
     */
    public boolean conflict() {
        return false;
    }
}
