package dev.idempotency.demo;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.servlet.ServletContext;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.SecurityContext;

import java.time.Clock;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/** {@code GET /about}: the API's name and version, the caller and its tenant, and this node's clock. Read-only. */
@Path("about")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class AboutResource {
    static final String API_VERSION = "1";

    @Inject
    Tenants tenants;
    @Inject
    Clock clock;
    @Context
    SecurityContext security;
    @Context
    ServletContext servlet;

    @GET
    public AboutView about() {
        AboutView v = new AboutView();
        v.name = "payments demo";
        v.apiVersion = API_VERSION;
        v.user = security.getUserPrincipal().getName();
        v.tenant = tenants.of(v.user);
        v.clock = OffsetDateTime.now(clock).withOffsetSameInstant(ZoneOffset.UTC);
        v.server = servlet.getServerInfo();
        return v;
    }
}
