package dev.idempotency.it.parts;

import dev.idempotency.jaxrs.IdempotencyStatusResource;
import jakarta.ws.rs.Path;

/** The status resource of the asynchronous {@code parts.task}. */
@Path("parts/tasks")
public class PartsTasks extends IdempotencyStatusResource {
    @Override
    protected String endpoint() {
        return "parts.task";
    }
}
