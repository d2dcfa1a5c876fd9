package dev.idempotency.it.statuses;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * Calls an {@code @Idempotent} resource method as a plain CDI bean, past the library's JAX-RS filters: the
 * library is not set up for that call (500 not-configured), and nothing runs.
 */
@Path("statuses/direct")
@RequestScoped
public class DirectCall {
    @Inject
    StatusesResource resource;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Response call(String body) {
        return resource.keys(body);
    }
}
