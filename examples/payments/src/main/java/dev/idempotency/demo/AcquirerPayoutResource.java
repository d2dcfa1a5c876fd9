package dev.idempotency.demo;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.util.List;

/**
 * The acquirer's payouts API, deliberately not idempotent: it records the caller's reference and lets it
 * be looked up, but every POST pays out. {@code X-Demo-Delay-Ms} makes its processing slow (between
 * RECEIVED and SETTLED), so that a caller with a short timeout gives up while the money still leaves.
 */
@Path("acquirer/payouts")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class AcquirerPayoutResource {
    @Inject
    Payouts payouts;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Response payout(PayoutRequest request, @HeaderParam("X-Demo-Delay-Ms") Long delayMillis) {
        if (request == null || request.reference == null || request.beneficiary == null || request.amount == null
                || request.amount.signum() <= 0 || request.currency == null || !request.currency.matches("[A-Z]{3}")) {
            throw DemoProblem.invalid("reference, beneficiary, a positive amount and a currency are required");
        }
        Payout received = payouts.receive(request);
        if (delayMillis != null && delayMillis > 0) {
            try {
                Thread.sleep(Math.min(delayMillis, 30_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
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
