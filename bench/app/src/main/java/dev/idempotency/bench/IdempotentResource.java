package dev.idempotency.bench;

import dev.idempotency.ClaimMode;
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
 * {@code POST /idempotent}: the same insert under {@code @Idempotent} with the shipped defaults; {@code POST
 * /idempotent/in-transaction} with the claim in the business transaction ({@link ClaimMode#IN_TRANSACTION}); {@code
 * POST /idempotent/cached} with its outcomes in Redis. No
 * {@code @Transactional}: the library begins the business transaction itself.
 */
@Path("idempotent")
@ApplicationScoped
public class IdempotentResource {
    @Inject
    Items items;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Idempotent(endpoint = "bench.create")
    public Response create(ItemRequest request, @Context UriInfo uri, @Context SecurityContext security) {
        return Items.created(uri, items.create(request, Items.owner(security)));
    }

    @POST
    @Path("in-transaction")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Idempotent(endpoint = "bench.in-transaction", claim = ClaimMode.IN_TRANSACTION)
    public Response createInTransaction(ItemRequest request, @Context UriInfo uri, @Context SecurityContext security) {
        return Items.created(uri, items.create(request, Items.owner(security)));
    }

    /** The same, with its finished outcomes kept in Redis (bench/wildfly.cli: only this endpoint). */
    @POST
    @Path("cached")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Idempotent(endpoint = "bench.cached")
    public Response createCached(ItemRequest request, @Context UriInfo uri, @Context SecurityContext security) {
        return Items.created(uri, items.create(request, Items.owner(security)));
    }
}
