package dev.idempotency.core;

import dev.idempotency.spi.StoreUnavailableException;

/**
 * A transaction of the protocol's own failed at commit without telling whether it committed (the connection
 * was lost while the database was committing). The database may hold its work; only a fenced conditional
 * update can tell, never a read on a possibly stale path.
 */
public class CommitOutcomeUnknownException extends StoreUnavailableException {
    private static final long serialVersionUID = 1L;

    public CommitOutcomeUnknownException(String message, Throwable cause) {
        super(message, cause, false);
    }
}
