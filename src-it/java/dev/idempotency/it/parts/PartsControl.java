package dev.idempotency.it.parts;

import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/** What the test reads of the application's own parts: its store's claims, its executor's free slot. */
@Path("parts-control")
@Produces(MediaType.TEXT_PLAIN)
public class PartsControl {
    @Inject
    ForwardingRecordStore store;
    @Inject
    OneTaskAtATime executor;

    @GET
    @Path("claims")
    public String claims() {
        return String.valueOf(store.claims());
    }

    /** 204 once the executor's slot is free (a task that ended releases it), 504 if not within 30 s. */
    @GET
    @Path("slot-free")
    public Response slotFree() throws InterruptedException {
        return executor.awaitFree(30) ? Response.noContent().build() : Response.status(504).build();
    }
}
