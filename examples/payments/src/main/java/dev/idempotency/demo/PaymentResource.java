package dev.idempotency.demo;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyContext;
import jakarta.inject.Inject;
import jakarta.enterprise.context.RequestScoped;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;

import java.util.List;

/**
 * {@code /payments}: create a payment once per idempotency key, charging the acquirer with a derived key.
 * An invalid request is a final failure (400, stored and replayed for its key): it is validated inside the
 * idempotent method.
 */
@Path("payments")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class PaymentResource {
    @Inject
    Payments payments;
    @Inject
    Checkout checkout;
    @Inject
    Tenants tenants;
    @Inject
    IdempotencyContext idempotency;
    @Context
    SecurityContext security;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Transactional
    @Idempotent(endpoint = "payments.create")
    public Response create(PaymentRequest request, @Context UriInfo uri) {
        Payment payment = checkout.pay(request, tenant());
        return Response.created(uri.getAbsolutePathBuilder().path(payment.id).build())
                .entity(PaymentView.of(payment)).build();
    }

    /**
     * The same payment with one commit instead of two ({@link dev.idempotency.ClaimMode#IN_TRANSACTION}): the claim is
     * written in this method's transaction, so nothing of the operation is visible until it commits; a concurrent
     * duplicate waits for it (at most {@code in-flight-wait}), then gets its answer, or 409.
     */
    @POST
    @Path("one-commit")
    @Consumes(MediaType.APPLICATION_JSON)
    @Transactional
    @Idempotent(endpoint = "payments.one-commit", claim = dev.idempotency.ClaimMode.IN_TRANSACTION)
    public Response createInOneCommit(PaymentRequest request, @Context UriInfo uri) {
        Payment payment = checkout.pay(request, tenant());
        return Response.created(uri.getBaseUriBuilder().path("payments").path(payment.id).build())
                .entity(PaymentView.of(payment)).build();
    }

    /**
     * The same payment as an asynchronous task, for an acquirer that may take long: the client gets 202 at once
     * with {@code Location} of {@code /payments/operations/{key}} ({@link PaymentTaskOperations}), and the payment
     * is made on the server's managed executor, in a transaction of its own (so no {@code @Transactional}
     * here). It runs on another thread than the request's: no JAX-RS {@code @Context} objects, so the tenant is
     * the operation's scope's and the {@code Location} is relative to the API's base.
     */
    @POST
    @Path("async")
    @Consumes(MediaType.APPLICATION_JSON)
    @Idempotent(endpoint = "payments.async", asynchronous = true)
    public Response createAsync(PaymentRequest request) {
        Payment payment = checkout.pay(request, idempotency.tenant().orElseThrow());
        return Response.status(Response.Status.CREATED).header("Location", java.net.URI.create("payments/" + payment.id))
                .entity(PaymentView.of(payment)).build();
    }

    @GET
    public List<PaymentView> byOrder(@QueryParam("merchantOrderNo") String merchantOrderNo) {
        if (merchantOrderNo == null || merchantOrderNo.isBlank()) {
            throw DemoProblem.invalid("the query parameter merchantOrderNo is required");
        }
        return payments.byOrder(tenant(), merchantOrderNo).stream().map(PaymentView::of).toList();
    }

    @GET
    @Path("{id}")
    public PaymentView one(@PathParam("id") String id) {
        return payments.find(tenant(), id).map(PaymentView::of).orElseThrow(() -> DemoProblem.notFound("payment"));
    }

    private String tenant() {
        return tenants.of(security.getUserPrincipal().getName());
    }
}
