package dev.idempotency.bench;

import dev.idempotency.Idempotent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;

/**
 * {@code POST /heavy}: {@link IdempotentResource} again under its own endpoint name, so that one caller
 * may hold 10^5 keys here ({@code idempotency.endpoints.bench.heavy.max-keys-per-endpoint}, set by
 * bench/wildfly.cli) while {@code bench.create} keeps the shipped limit.
 */
@Path("heavy")
@ApplicationScoped
public class HeavyCallerResource {
    @Inject
    Items items;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Idempotent(endpoint = "bench.heavy")
    public Response create(ItemRequest request, @Context UriInfo uri, @Context SecurityContext security) {
        return Items.created(uri, items.create(request, Items.owner(security)));
    }
}
