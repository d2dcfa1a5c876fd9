package dev.idempotency.demo;

import jakarta.persistence.PersistenceException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

/**
 * A database failure the payment did not expect (connection lost, database restarting): nothing was
 * committed, the client retries with the same key (503, retryable for the library). The one expected
 * persistence failure, a merchant order already paid, is handled where it happens.
 */
@Provider
public class DatabaseUnavailableMapper implements ExceptionMapper<PersistenceException> {
    @Override
    public Response toResponse(PersistenceException e) {
        return Response.status(503).header("Retry-After", 1).type("application/problem+json")
                .entity("{\"type\":\"" + DemoProblem.TYPE_BASE + "database-unavailable\",\"title\":\"Database unavailable\","
                        + "\"status\":503,\"detail\":\"the payment could not be stored; retry with the same Idempotency-Key\"}")
                .build();
    }
}
