package dev.idempotency.it.statuses;

import dev.idempotency.jaxrs.DerivedKeyClientFilter;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.rest.client.annotation.RegisterProvider;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

/**
 * A MicroProfile Rest Client with no annotation of the library: its purpose and header come from the configuration
 * ({@code idempotency.client.ledger.purpose}, {@code .header}).
 */
@RegisterRestClient(configKey = "ledger")
@RegisterProvider(DerivedKeyClientFilter.class)
public interface LedgerApi {
    @POST
    @Path("downstream/echo")
    @Produces(MediaType.TEXT_PLAIN)
    String post(@HeaderParam("Authorization") String authorization, String body);
}
