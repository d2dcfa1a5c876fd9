package dev.idempotency.endpoint;

import dev.idempotency.jaxrs.IdempotencyStatusResource;
import jakarta.ws.rs.Path;

/** The status resource of the asynchronous payments (idempotency.endpoints.payments.async.status-path). */
@Path("async-operations")
public class AsyncPaymentOperations extends IdempotencyStatusResource {
    @Override
    protected String endpoint() {
        return "payments.async";
    }
}
