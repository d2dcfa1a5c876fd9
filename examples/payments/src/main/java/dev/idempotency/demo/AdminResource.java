package dev.idempotency.demo;

import dev.idempotency.jaxrs.IdempotencyAdminResource;
import jakarta.ws.rs.Path;

/**
 * {@code /admin/idempotency}: the library's admin resource for the demo's operator (role {@code idempotency-admin},
 * the user {@code operator}): the records of an endpoint, stuck ones first; one record; releasing a stuck one;
 * purging the expired ones now.
 */
@Path("admin/idempotency")
public class AdminResource extends IdempotencyAdminResource {
}
