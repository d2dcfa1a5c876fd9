package dev.idempotency.jaxrs;

import dev.idempotency.IdempotencyException;
import dev.idempotency.cdi.IdempotencyRuntime;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;

/** Maps the library's own exceptions, and only those, to {@code application/problem+json}. */
public class IdempotencyExceptionMapper implements ExceptionMapper<IdempotencyException> {

    @Override
    public Response toResponse(IdempotencyException exception) {
        IdempotencyRuntime runtime = CDI.current().select(IdempotencyRuntime.class).get();
        return new ProblemResponses(runtime.settings().problemBase()).toResponse(exception.problem());
    }
}
