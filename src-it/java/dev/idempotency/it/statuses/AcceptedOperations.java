package dev.idempotency.it.statuses;

import dev.idempotency.jaxrs.IdempotencyStatusResource;
import jakarta.ws.rs.Path;

/** The status resource of {@code statuses.accepted}, where its 202 answers point. */
@Path("statuses/operations")
public class AcceptedOperations extends IdempotencyStatusResource {
    @Override
    protected String endpoint() {
        return "statuses.accepted";
    }
}
