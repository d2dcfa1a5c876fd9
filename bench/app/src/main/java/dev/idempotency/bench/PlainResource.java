package dev.idempotency.bench;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;

/** {@code POST /plain}: the business insert with no idempotency at all (one transaction). */
@Path("plain")
@ApplicationScoped
public class PlainResource {
    @Inject
    Items items;

    @POST
    @Transactional
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Response create(ItemRequest request, @Context UriInfo uri, @Context SecurityContext security) {
        return Items.created(uri, items.create(request, Items.owner(security)));
    }
}
