package dev.idempotency.demo;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyContext;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.validation.Validator;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * Payouts: the whole effect is downstream, at an acquirer whose payouts API does not deduplicate. The
 * operation's derived key goes along as the payout's reference; when an attempt ends without knowing
 * whether the money left (the acquirer was slower than our timeout), the next attempt is decided by
 * {@link PayoutOutcomeResolver} asking the acquirer, never by paying out again blindly.
 */
@Path("payouts")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class PayoutResource {
    @Inject
    AcquirerPayoutClient acquirer;
    @Inject
    IdempotencyContext idempotency;
    @Inject
    Validator validator;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Idempotent(endpoint = "payouts.create", externalSideEffects = true)
    public Response create(PayoutRequest request) {
        DemoProblem.requireValid(validator, request);
        PayoutView payout = acquirer.payout(request, idempotency.derive("acquirer.payout"));
        return Response.status(201).entity(payout.json()).type(MediaType.APPLICATION_JSON).build();
    }
}
