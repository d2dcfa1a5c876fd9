package dev.idempotency.it.statuses;

import dev.idempotency.DerivedKey;
import dev.idempotency.jaxrs.DerivedKeyClientFilter;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.rest.client.annotation.RegisterProvider;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

/** A MicroProfile Rest Client whose calls carry the operation's key derived for {@code echo.charge}. */
@RegisterRestClient(configKey = "echo")
@RegisterProvider(DerivedKeyClientFilter.class)
@DerivedKey("echo.charge")
public interface EchoApi {
    @POST
    @Path("downstream/echo")
    @Produces(MediaType.TEXT_PLAIN)
    String echo(@HeaderParam("Authorization") String authorization, String body);
}
