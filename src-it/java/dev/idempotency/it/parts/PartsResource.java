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
 * The endpoints of the application with parts of its own: a payment (claimed through its {@link ForwardingRecordStore})
 * and an asynchronous task (run by its {@link OneTaskAtATime} executor, held until the test releases it).
 */
@Path("parts")
@RequestScoped
@Consumes(MediaType.APPLICATION_JSON)
@Produces(MediaType.APPLICATION_JSON)
public class PartsResource {
    @Inject
    Holds holds;
    @Inject
    IdempotencyContext idempotency;

    @POST
    @Path("payments")
    @Idempotent(endpoint = "parts.payments")
    public Response pay(String body) {
        String key = idempotency.key().orElseThrow();
        holds.ran(key);
        return Response.status(201).entity("{\"key\":\"" + key + "\",\"execution\":" + holds.executions(key) + "}")
                .build();
    }

    @POST
    @Path("task")
    @Idempotent(endpoint = "parts.task", asynchronous = true)
    public String task(String body) {
        String key = idempotency.key().orElseThrow();
        holds.ran(key);
        holds.hold(key);
        return "{\"key\":\"" + key + "\",\"execution\":" + holds.executions(key) + "}";
    }
}
