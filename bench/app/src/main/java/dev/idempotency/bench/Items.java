package dev.idempotency.bench;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.ws.rs.BadRequestException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;

import java.net.URI;
import java.util.UUID;

/** The business work of every write row: one JPA insert in the caller's JTA transaction, one answer shape. */
@ApplicationScoped
public class Items {
    @PersistenceContext(unitName = "bench")
    EntityManager em;

    /** Inserts an item; must run inside a JTA transaction. */
    public Item create(ItemRequest request, String owner) {
        if (request == null || request.name == null || request.amount == null || request.currency == null) {
            throw new BadRequestException("name, amount and currency are required");
        }
        Item item = new Item();
        item.id = UUID.randomUUID().toString();
        item.owner = owner;
        item.name = request.name;
        item.amount = request.amount;
        item.currency = request.currency;
        em.persist(item);
        return item;
    }

    /** Where the created item would be read. */
    public static URI location(UriInfo uri, Item item) {
        return uri.getAbsolutePathBuilder().path(item.id).build();
    }

    /** 201 with Location and the item as JSON (serialized by RESTEasy with the shared JSON-B engine). */
    public static Response created(UriInfo uri, Item item) {
        return Response.created(location(uri, item)).entity(ItemView.of(item)).build();
    }

    /** The caller, or {@code anonymous} for the endpoints that do not need one. */
    public static String owner(SecurityContext security) {
        return security.getUserPrincipal() == null ? "anonymous" : security.getUserPrincipal().getName();
    }
}
