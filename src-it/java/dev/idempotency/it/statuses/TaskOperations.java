package dev.idempotency.it.statuses;

import dev.idempotency.jaxrs.IdempotencyStatusResource;
import jakarta.ws.rs.Path;

/** The status resource of the asynchronous {@code statuses.task}: 202 while its task runs, then its outcome. */
@Path("statuses/tasks")
public class TaskOperations extends IdempotencyStatusResource {
    @Override
    protected String endpoint() {
        return "statuses.task";
    }
}
