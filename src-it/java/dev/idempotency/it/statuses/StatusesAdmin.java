package dev.idempotency.it.statuses;

import dev.idempotency.jaxrs.IdempotencyAdminResource;
import jakarta.ws.rs.Path;

/** The library's admin resource in this application, for the servers' operator user (role idempotency-admin). */
@Path("admin/idempotency")
public class StatusesAdmin extends IdempotencyAdminResource {
}
