package dev.idempotency.endpoint;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyContext;
import dev.idempotency.InFlightPolicy;
import dev.idempotency.KeySource;
import dev.idempotency.ResponseStorage;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;

import java.math.BigDecimal;
import java.util.UUID;
import java.util.function.Consumer;

/** The test application's payments API: one endpoint per library behaviour the tests exercise. */
@ApplicationScoped
@Path("payments")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class PaymentResource {
    /** Runs inside the business transaction, before the payment is written; tests use it to interfere. */
    public static volatile Consumer<String> duringExecution = key -> { };

    @Inject
    Payments payments;
    @Inject
    IdempotencyContext idempotency;

    @POST
    @Idempotent(endpoint = "payments.create")
    public Response create(PaymentRequest request, @Context UriInfo uri, @HeaderParam("X-User") String user,
                           @HeaderParam("X-Fail") String fail) {
        return pay(request, uri, fail);
    }

    @POST
    @Path("joined")
    @Transactional
    @Idempotent(endpoint = "payments.joined")
    public Response createInApplicationTransaction(PaymentRequest request, @Context UriInfo uri,
                                                   @HeaderParam("X-Fail") String fail) {
        return pay(request, uri, fail);
    }

    /** ClaimMode.IN_TRANSACTION in the library's own business transaction: one commit for claim, payment and outcome. */
    @POST
    @Path("in-transaction")
    @Idempotent(endpoint = "payments.in-transaction", claim = dev.idempotency.ClaimMode.IN_TRANSACTION,
            finalOn = AcquirerUnavailable.class)
    public Response createInTransaction(PaymentRequest request, @Context UriInfo uri, @HeaderParam("X-Fail") String fail) {
        return pay(request, uri, fail);
    }

    /** ClaimMode.IN_TRANSACTION in the application's @Transactional. */
    @POST
    @Path("in-transaction-joined")
    @Transactional
    @Idempotent(endpoint = "payments.in-transaction-joined", claim = dev.idempotency.ClaimMode.IN_TRANSACTION)
    public Response createInTransactionJoined(PaymentRequest request, @Context UriInfo uri,
                                              @HeaderParam("X-Fail") String fail) {
        return pay(request, uri, fail);
    }

    /** Keeps the declined attempt: the decline does not roll the transaction back. */
    @POST
    @Path("declined")
    @Transactional(dontRollbackOn = PaymentDeclined.class)
    @Idempotent(endpoint = "payments.declined")
    public Response createDeclined(PaymentRequest request, @Context UriInfo uri) {
        throw new PaymentDeclined(paymentIdOf(pay(request, uri, null)));
    }

    @POST
    @Path("expired")
    @Transactional
    @Idempotent(endpoint = "payments.expired")
    public Response createExpired(PaymentRequest request, @Context UriInfo uri) throws PaymentDeclined.CardExpired {
        throw new PaymentDeclined.CardExpired(paymentIdOf(pay(request, uri, null)));
    }

    /** In the library's own transaction (no @Transactional): an EJB application exception with rollback = false. */
    @POST
    @Path("flagged")
    @Idempotent(endpoint = "payments.flagged")
    public Response createFlagged(PaymentRequest request, @Context UriInfo uri) {
        throw new PaymentDeclined.Flagged(paymentIdOf(pay(request, uri, null)));
    }

    private static String paymentIdOf(Response created) {
        String location = created.getLocation().getPath();
        return location.substring(location.lastIndexOf('/') + 1);
    }

    /** The charge key is a secret of the first response: never stored (redact-fields=chargeKey). */
    @POST
    @Path("redacted")
    @Idempotent(endpoint = "payments.redacted")
    public Response createRedacted(PaymentRequest request, @Context UriInfo uri) {
        return pay(request, uri, null);
    }

    @POST
    @Path("by-order")
    @Idempotent(endpoint = "payments.by-order", keySource = KeySource.BODY_FIELD, keyName = "merchantOrderNo")
    public Response createByOrder(PaymentRequest request, @Context UriInfo uri) {
        return pay(request, uri, null);
    }

    @POST
    @Path("sealed")
    @Idempotent(endpoint = "payments.sealed", storage = ResponseStorage.ENCRYPTED)
    public Response createSealed(PaymentRequest request, @Context UriInfo uri) {
        return pay(request, uri, null);
    }

    @POST
    @Path("minimal")
    @Idempotent(endpoint = "payments.minimal", storage = ResponseStorage.MINIMAL, replayWith = "view")
    public Response createMinimal(PaymentRequest request, @Context UriInfo uri) {
        return pay(request, uri, null);
    }

    @POST
    @Path("waiting")
    @Idempotent(endpoint = "payments.waiting", inFlight = InFlightPolicy.WAIT)
    public Response createWaiting(PaymentRequest request, @Context UriInfo uri) {
        return pay(request, uri, null);
    }

    @POST
    @Path("accepted")
    @Idempotent(endpoint = "payments.accepted", inFlight = InFlightPolicy.ACCEPTED)
    public Response createAccepted(PaymentRequest request, @Context UriInfo uri) {
        return pay(request, uri, null);
    }

    @POST
    @Path("classified")
    @Idempotent(endpoint = "payments.classified", finalOn = AcquirerUnavailable.class, retryOn = PaymentRejected.class)
    public Response createClassified(PaymentRequest request, @Context UriInfo uri, @HeaderParam("X-Fail") String fail) {
        return pay(request, uri, fail);
    }

    @POST
    @Path("versioned")
    @Idempotent(endpoint = "payments.versioned")
    public Response createVersioned(PaymentRequest request, @Context UriInfo uri) {
        return pay(request, uri, null);
    }

    @POST
    @Path("large")
    @Idempotent(endpoint = "payments.large")
    public Response createLarge(PaymentRequest request, @Context UriInfo uri) {
        Response created = pay(request, uri, null);
        return Response.fromResponse(created).entity("x".repeat(5000)).type(MediaType.TEXT_PLAIN).build();
    }

    /** The same large response with the default oversize-response=omit-body. */
    @POST
    @Path("large-kept")
    @Idempotent(endpoint = "payments.large-kept")
    public Response createLargeKept(PaymentRequest request, @Context UriInfo uri) {
        Response created = pay(request, uri, null);
        return Response.fromResponse(created).entity("x".repeat(5000)).type(MediaType.TEXT_PLAIN).build();
    }

    /** Calls the acquirer through a JAX-RS client with the library's derived-key filter; the call never leaves. */
    @POST
    @Path("downstream")
    @Idempotent(endpoint = "payments.downstream")
    public Response createWithDownstreamCall(PaymentRequest request) {
        jakarta.ws.rs.client.Client client = jakarta.ws.rs.client.ClientBuilder.newClient()
                .register(new dev.idempotency.jaxrs.DerivedKeyClientFilter("acquirer.charge"))
                .register((jakarta.ws.rs.client.ClientRequestFilter) call -> call.abortWith(Response
                        .ok("{\"sentKey\":\"" + call.getHeaderString("Idempotency-Key") + "\",\"chargeKey\":\""
                                + idempotency.derive("acquirer.charge") + "\"}", MediaType.APPLICATION_JSON).build()),
                        jakarta.ws.rs.Priorities.USER + 1000);
        try {
            String answer = client.target("http://acquirer.invalid/charges").request()
                    .post(jakarta.ws.rs.client.Entity.json("{}"), String.class);
            return Response.ok(answer, MediaType.APPLICATION_JSON).build();
        } finally {
            client.close();
        }
    }

    /** A long payment as an asynchronous task: answered 202 at once, run on the executor (ADR 10). */
    @POST
    @Path("async")
    @Idempotent(endpoint = "payments.async", asynchronous = true, finalOn = PaymentRejected.class,
            retryOn = AcquirerUnavailable.class)
    public Response createAsync(PaymentRequest request, @HeaderParam("X-Fail") String fail) {
        // No @Context UriInfo: RESTEasy's is bound to the request's thread, and the task runs on another.
        return pay(request, null, fail);
    }

    @GET
    @Path("{id}")
    public PaymentView get(@PathParam("id") String id) {
        return view(id);
    }

    /** Rebuilds the body of a minimal-storage replay from the resource id. */
    PaymentView view(String id) {
        Payment p = payments.find(id);
        return new PaymentView(p.id, p.merchantOrderNo, p.amount, p.currency, p.chargeKey, 0);
    }

    private Response pay(PaymentRequest request, UriInfo uri, String fail) {
        if (request != null && request.currency != null && !request.currency.matches("[A-Z]{3}")) {
            // What a Bean Validation provider throws for @Pattern on a parameter; no mapper here: 500.
            throw new jakarta.validation.ConstraintViolationException("currency must be 3 upper-case letters",
                    java.util.Set.of());
        }
        if (request == null || request.amount == null || request.amount.signum() <= 0) {
            throw new PaymentRejected("amount must be positive");
        }
        if ("unavailable-before-any-key".equals(fail)) {
            // Fails before the key, or a key derived from it, was handed to anything.
            throw new AcquirerUnavailable();
        }
        if ("unavailable-after-owner".equals(fail)) {
            // Reads whose operation it is (tenant, principal), which hands no key out, then fails.
            if (idempotency.tenant().isEmpty() || idempotency.principal().isEmpty()) {
                throw new IllegalStateException("an active operation has an owner");
            }
            throw new AcquirerUnavailable();
        }
        if ("unavailable-after-scope".equals(fail)) {
            // Reads the whole scope, its key with it, then fails: the key may have been used.
            idempotency.scope().orElseThrow();
            throw new AcquirerUnavailable();
        }
        duringExecution.accept(idempotency.key().orElse(""));
        Payment payment = new Payment();
        payment.id = UUID.randomUUID().toString();
        payment.tenant = idempotency.scope().map(s -> s.tenant()).orElse("");
        payment.merchantOrderNo = request.merchantOrderNo;
        payment.amount = request.amount.setScale(2, java.math.RoundingMode.UNNECESSARY);
        payment.currency = request.currency;
        payment.chargeKey = idempotency.derive("acquirer.charge");
        payments.persist(payment);
        if ("transient".equals(fail)) {
            throw new AcquirerUnavailable();
        }
        if ("commit-unknown".equals(fail)) {
            enlistCommitFailingResource();
        }
        if ("rollback-only".equals(fail)) {
            markRollbackOnly();
        }
        // Without the request's UriInfo, a relative Location, resolved against the base URI as JAX-RS does.
        return (uri == null ? Response.status(201).header("Location", java.net.URI.create("payments/" + payment.id))
                : Response.created(uri.getBaseUriBuilder().path("payments").path(payment.id).build()))
                .header("Set-Cookie", "session=secret")
                .header("X-Payment-Region", "eu")
                .entity(new PaymentView(payment.id, payment.merchantOrderNo, payment.amount, payment.currency,
                        payment.chargeKey, idempotency.attempt()))
                .build();
    }

    // What an application does when it decides, without an exception, that nothing may commit.
    private static void markRollbackOnly() {
        try {
            dev.idempotency.testing.Narayana.transactionManager().setRollbackOnly();
        } catch (jakarta.transaction.SystemException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void enlistCommitFailingResource() {
        try {
            dev.idempotency.testing.Narayana.transactionManager().getTransaction()
                    .enlistResource(new dev.idempotency.testing.CommitFailingResource());
        } catch (jakarta.transaction.RollbackException | jakarta.transaction.SystemException e) {
            throw new IllegalStateException(e);
        }
    }

    static BigDecimal amount(String text) {
        return new BigDecimal(text);
    }
}
