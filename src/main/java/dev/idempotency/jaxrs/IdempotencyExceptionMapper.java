package dev.idempotency.jaxrs;

import dev.idempotency.IdempotencyException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;

/** Maps the library's own exceptions, and only those, to {@code application/problem+json}. */
public class IdempotencyExceptionMapper implements ExceptionMapper<IdempotencyException> {
    private final Collaborators collaborators = new Collaborators();

    @Override
    public Response toResponse(IdempotencyException exception) {
        return collaborators.runtime().problems().toResponse(exception.problem());
    }
}
