package dev.idempotency.demo;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.validation.Validator;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.util.List;

/**
 * The acquirer's payouts API, deliberately not idempotent: it records the caller's reference and lets it
 * be looked up, but every POST pays out. Each payout is RECEIVED, then SETTLED (the demo's faults can make
 * that take long, {@link DemoFaults}).
 */
@Path("acquirer/payouts")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class AcquirerPayoutResource {
    @Inject
    Payouts payouts;
    @Inject
    Validator validator;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Response payout(PayoutRequest request) {
        DemoProblem.requireValid(validator, request, PayoutRequest.AtAcquirer.class);
        Payout received = payouts.receive(request);
        return Response.status(201).entity(PayoutView.of(payouts.settle(received.id))).build();
    }

    @GET
    public List<PayoutView> byReference(@QueryParam("reference") String reference) {
        if (reference == null || reference.isBlank()) {
            throw DemoProblem.invalid("the query parameter reference is required");
        }
        return payouts.byReference(reference).stream().map(PayoutView::of).toList();
    }
}
