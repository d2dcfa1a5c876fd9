package dev.idempotency.it.statuses;

import dev.idempotency.DerivedKey;
import dev.idempotency.jaxrs.DerivedKeyClientFilter;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.rest.client.annotation.RegisterProvider;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

/** A MicroProfile Rest Client whose calls carry the operation's key derived for {@code scripted.call}. */
@RegisterRestClient(configKey = "retrying")
@RegisterProvider(DerivedKeyClientFilter.class)
@DerivedKey("scripted.call")
public interface RetryingApi {
    @POST
    @Path("downstream/scripted")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    String call(@HeaderParam("Authorization") String authorization, @QueryParam("script") String script, String body);
}
