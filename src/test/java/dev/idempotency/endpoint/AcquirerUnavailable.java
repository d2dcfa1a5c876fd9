package dev.idempotency.endpoint;

/** A transient failure after the business write: mapped to 503 by the application, retryable. */
public class AcquirerUnavailable extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public AcquirerUnavailable() {
        super("acquirer unavailable");
    }
}
