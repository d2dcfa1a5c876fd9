package dev.idempotency.jaxrs;

import dev.idempotency.IdempotencyState;
import jakarta.ws.rs.ProcessingException;

import java.util.Optional;

/**
 * A call through {@link IdempotentCalls} whose operation's outcome nobody could tell within the retry budget:
 * the server's last answer said {@code unknown} or {@code in-progress} (or, from a server without
 * {@code Idempotency-State}, still in flight or unavailable), or no answer came at all. The work may or may not have
 * been applied: the caller
 * must not guess, nor send the operation under a new key; a later call with the same key gets its outcome.
 *
 * <p>A JAX-RS runtime may hand it to the caller wrapped in a {@link ProcessingException}: {@link #in(Throwable)}
 * finds it in a cause chain.
 */
public class OperationOutcomeUnknownException extends ProcessingException {
    private final int lastStatus;
    private final transient Optional<IdempotencyState> lastState;
    private final int attempts;

    public OperationOutcomeUnknownException(String message, int lastStatus, Optional<IdempotencyState> lastState,
                                            int attempts) {
        super(message);
        this.lastStatus = lastStatus;
        this.lastState = lastState;
        this.attempts = attempts;
    }

    /** The HTTP status of the last answer. */
    public int lastStatus() {
        return lastStatus;
    }

    /** What the last answer said about the operation, when the server says it. */
    public Optional<IdempotencyState> lastState() {
        return lastState;
    }

    /** How many times the request was sent. */
    public int attempts() {
        return attempts;
    }

    /** This exception in {@code thrown} or its causes, as a runtime may wrap it. */
    public static Optional<OperationOutcomeUnknownException> in(Throwable thrown) {
        for (Throwable t = thrown; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof OperationOutcomeUnknownException unknown) {
                return Optional.of(unknown);
            }
        }
        return Optional.empty();
    }
}
