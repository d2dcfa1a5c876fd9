package dev.idempotency.demo;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyContext;
import jakarta.inject.Inject;
import jakarta.enterprise.context.RequestScoped;
import jakarta.persistence.PersistenceException;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
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

import java.math.BigDecimal;
import java.util.List;
import java.util.UUID;

/**
 * {@code /payments}: create a payment once per idempotency key, charging the acquirer with a derived key.
 * Demo-only fault headers (not part of the fingerprint): {@code X-Demo-Delay-Ms} sleeps inside the
 * transaction after the charge; {@code X-Demo-Fail: transient} fails after the charge (503, rolled back);
 * {@code X-Demo-Fail: at-commit} makes the commit itself fail, after the idempotency record was updated in
 * the same transaction (503, both rolled back).
 */
@Path("payments")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class PaymentResource {
    private static final long MAX_DELAY_MS = 60_000;

    @Inject
    Payments payments;
    @Inject
    AcquirerClient acquirer;
    @Inject
    Tenants tenants;
    @Inject
    IdempotencyContext idempotency;
    @Context
    SecurityContext security;
    @jakarta.annotation.Resource
    jakarta.transaction.TransactionSynchronizationRegistry synchronizations;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Transactional
    @Idempotent(endpoint = "payments.create")
    public Response create(PaymentRequest request, @Context UriInfo uri,
                           @HeaderParam("X-Demo-Delay-Ms") String delayMs, @HeaderParam("X-Demo-Fail") String fail) {
        validate(request);
        Payment payment = new Payment();
        payment.id = UUID.randomUUID().toString();
        payment.tenant = tenant();
        payment.merchantOrderNo = request.merchantOrderNo;
        payment.amount = request.amount.setScale(2, java.math.RoundingMode.UNNECESSARY);
        payment.currency = request.currency;
        payment.status = "PENDING";
        try {
            payments.insert(payment);
        } catch (PersistenceException duplicate) {
            String holder = payments.holderOf(payment.tenant, payment.merchantOrderNo).orElse("(in progress)");
            throw DemoProblem.alreadyPaid(payment.merchantOrderNo, holder);
        }
        payment.chargeId = acquirer.charge(payment);
        payment.status = "CAPTURED";
        payments.update(payment);
        sleep(delayMs);
        if ("transient".equalsIgnoreCase(fail)) {
            throw DemoProblem.transientFailure();
        }
        if ("at-commit".equalsIgnoreCase(fail)) {
            synchronizations.registerInterposedSynchronization(new jakarta.transaction.Synchronization() {
                @Override
                public void beforeCompletion() {
                    throw new IllegalStateException("X-Demo-Fail: at-commit");
                }

                @Override
                public void afterCompletion(int status) {
                }
            });
        }
        return Response.created(uri.getAbsolutePathBuilder().path(payment.id).build())
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

    private static void validate(PaymentRequest request) {
        if (request == null) {
            throw DemoProblem.invalid("a JSON body is required");
        }
        if (request.merchantOrderNo == null || request.merchantOrderNo.isBlank() || request.merchantOrderNo.length() > 128) {
            throw DemoProblem.invalid("merchantOrderNo must be 1 to 128 characters");
        }
        if (request.amount == null || request.amount.signum() <= 0 || request.amount.scale() > 2
                || request.amount.compareTo(new BigDecimal("1000000000")) >= 0) {
            throw DemoProblem.invalid("amount must be positive, below 1e9, with at most 2 decimals");
        }
        if (request.currency == null || !request.currency.matches("[A-Z]{3}")) {
            throw DemoProblem.invalid("currency must be 3 upper-case letters");
        }
    }

    private static void sleep(String delayMs) {
        if (delayMs == null) {
            return;
        }
        long millis;
        try {
            millis = Math.min(MAX_DELAY_MS, Math.max(0, Long.parseLong(delayMs.trim())));
        } catch (NumberFormatException e) {
            throw DemoProblem.invalid("X-Demo-Delay-Ms must be a number of milliseconds");
        }
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
