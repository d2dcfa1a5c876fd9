package dev.idempotency;

/**
 * A misuse of {@link Idempotent} or an invalid {@code idempotency.*} setting, reported at deployment so
 * that the application does not start. Messages start with a stable id ({@code IDEM-D###}).
 */
public class IdempotencyDefinitionException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public IdempotencyDefinitionException(String message) {
        super(message);
    }

    public IdempotencyDefinitionException(String message, Throwable cause) {
        super(message, cause);
    }
}
