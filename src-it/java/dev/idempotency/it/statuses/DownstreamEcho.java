package dev.idempotency.it.statuses;

import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/** A downstream service that answers with the keys it was sent: what a Rest Client call carried. */
@Path("downstream")
public class DownstreamEcho {
    @POST
    @Path("echo")
    @Produces(MediaType.TEXT_PLAIN)
    public String echo(@HeaderParam("Idempotency-Key") String key, @HeaderParam("Ledger-Key") String ledgerKey) {
        return key != null ? key : ledgerKey != null ? "ledger:" + ledgerKey : "none";
    }
}
