package dev.idempotency.it.parts;

import dev.idempotency.IdempotencyContext;
import dev.idempotency.Idempotent;
import dev.idempotency.it.statuses.Holds;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * An idempotent endpoint under a path the application leaves open to unauthenticated callers (web.xml), with the
 * library's default {@code idempotency.anonymous=reject}: the library, not the container, refuses them (401).
 */
@Path("open")
@RequestScoped
@Consumes(MediaType.APPLICATION_JSON)
@Produces(MediaType.APPLICATION_JSON)
public class OpenResource {
    @Inject
    Holds holds;
    @Inject
    IdempotencyContext idempotency;

    @POST
    @Path("payments")
    @Idempotent(endpoint = "parts.open")
    public Response pay(String body) {
        holds.ran(idempotency.key().orElseThrow());
        return Response.status(201).entity("{}").build();
    }
}
