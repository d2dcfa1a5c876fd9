package dev.idempotency.spi;

/** The insert of a claim met an existing record with the same scope key (a unique violation). */
public class DuplicateRecordException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public DuplicateRecordException(String message, Throwable cause) {
        super(message, cause);
    }
}
