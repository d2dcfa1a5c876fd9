package dev.idempotency.demo;

import dev.idempotency.jaxrs.IdempotencyStatusResource;
import jakarta.ws.rs.Path;

/** {@code GET /idempotency/{key}}: the state of the caller's own payment operation with that key. */
@Path("idempotency")
public class PaymentOperations extends IdempotencyStatusResource {
    @Override
    protected String endpoint() {
        return "payments.create";
    }
}
