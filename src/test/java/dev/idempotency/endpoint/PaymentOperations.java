package dev.idempotency.endpoint;

import dev.idempotency.jaxrs.IdempotencyStatusResource;
import jakarta.ws.rs.Path;

/** The library's status resource as an application registers it. */
@Path("idempotency")
public class PaymentOperations extends IdempotencyStatusResource {
    @Override
    protected String endpoint() {
        return "payments.create";
    }
}
