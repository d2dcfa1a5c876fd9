package dev.idempotency.endpoint;

import dev.idempotency.jaxrs.IdempotencyAdminResource;
import jakarta.ws.rs.Path;

/** The test application's admin resource, in the default role {@code idempotency-admin}. */
@Path("admin/idempotency")
public class RecordsAdmin extends IdempotencyAdminResource {
}
