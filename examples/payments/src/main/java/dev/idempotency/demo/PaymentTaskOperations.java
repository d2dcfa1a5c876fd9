package dev.idempotency.demo;

import dev.idempotency.jaxrs.IdempotencyStatusResource;
import jakarta.ws.rs.Path;

/**
 * {@code GET /payments/operations/{key}}: the caller's asynchronous payment with that key ({@code POST
 * /payments/async}): 202 while it runs, then its outcome. Its path is the endpoint's
 * {@code idempotency.endpoints.payments.async.status-path}, which the server configuration sets.
 */
@Path("payments/operations")
public class PaymentTaskOperations extends IdempotencyStatusResource {
    @Override
    protected String endpoint() {
        return "payments.async";
    }
}
