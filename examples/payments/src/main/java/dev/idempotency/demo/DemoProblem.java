package dev.idempotency.demo;

import jakarta.json.Json;
import jakarta.json.JsonObjectBuilder;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.Validator;
import jakarta.validation.groups.Default;
import jakarta.ws.rs.core.Response;

import java.util.Set;
import java.util.stream.Collectors;

/**
 * The demo's own errors as RFC 9457 problems, each with a stable type URI. A 4xx is a final outcome for
 * the library (stored and replayed); a 5xx is retryable (the next retry runs again).
 */
public class DemoProblem extends RuntimeException {
    private static final long serialVersionUID = 1L;
    static final String TYPE_BASE = "https://demo.idempotency.dev/problems/";

    private final int status;
    private final String slug;
    private final String title;
    private final String paymentId;
    private final Integer retryAfter;

    private DemoProblem(int status, String slug, String title, String detail, String paymentId, Integer retryAfter) {
        super(detail);
        this.status = status;
        this.slug = slug;
        this.title = title;
        this.paymentId = paymentId;
        this.retryAfter = retryAfter;
    }

    /** Whether the caller's request is at fault (4xx): the same request fails the same way. */
    boolean clientError() {
        return status >= 400 && status < 500;
    }

    static DemoProblem invalid(String detail) {
        return new DemoProblem(400, "invalid-payment", "Invalid payment", detail, null, null);
    }

    /**
     * Checks a request body against its Bean Validation constraints (and {@code groups}, besides the default
     * one): a missing body or any violation is a 400 naming every violated rule.
     */
    static void requireValid(Validator validator, Object request, Class<?>... groups) {
        if (request == null) {
            throw invalid("a JSON body is required");
        }
        Class<?>[] all = java.util.stream.Stream.concat(java.util.stream.Stream.of(Default.class),
                java.util.Arrays.stream(groups)).toArray(Class<?>[]::new);
        Set<ConstraintViolation<Object>> violations = validator.validate(request, all);
        if (!violations.isEmpty()) {
            throw invalid(violations.stream().map(ConstraintViolation::getMessage).distinct().sorted()
                    .collect(Collectors.joining("; ")));
        }
    }

    static DemoProblem alreadyPaid(String merchantOrderNo, String paymentId) {
        return new DemoProblem(409, "order-already-paid", "Order already paid", "merchant order " + merchantOrderNo
                + " is already paid by payment " + paymentId, paymentId, null);
    }

    static DemoProblem transientFailure() {
        return new DemoProblem(503, "acquirer-unavailable", "Acquirer temporarily unavailable",
                "the charge could not be confirmed; retry with the same Idempotency-Key", null, 1);
    }

    /** The payment stopped before it reached the acquirer: nothing was done anywhere. */
    static DemoProblem notStarted() {
        return new DemoProblem(503, "payment-not-started", "Payment not started",
                "the payment stopped before the acquirer was called: nothing was done; its Idempotency-State says"
                        + " whether to retry with the same key or a new one", null, 1);
    }

    static DemoProblem payoutOutcomeUnknown() {
        return new DemoProblem(503, "payout-outcome-unknown", "Payout outcome unknown",
                "the acquirer did not answer in time; retry with the same Idempotency-Key and it will be asked first",
                null, 1);
    }

    static DemoProblem noTenant(String user) {
        return new DemoProblem(403, "no-tenant", "No tenant", "user " + user + " belongs to no tenant of this service",
                null, null);
    }

    static DemoProblem noBroker() {
        return new DemoProblem(503, "no-broker", "No message broker", "payment commands need a message broker:"
                + " run the demo on WildFly's full profile (scripts/demo.sh)", null, null);
    }

    static DemoProblem notFound(String what) {
        return new DemoProblem(404, "not-found", "Not found", what + " not found", null, null);
    }

    /**
     * The acquirer refused the charge as a different request under the payment's derived key: an earlier attempt of
     * this key, with another payment, charged there and then rolled back here (a claim in the business transaction
     * leaves nothing of it). Retryable, not final: a final answer would make the key this request's for good, and the
     * earlier payment's own retry, which the acquirer answers with its charge, could never reconcile it.
     */
    static DemoProblem keyHoldsAnotherPaymentDownstream() {
        return new DemoProblem(503, "acquirer-holds-another-payment", "Acquirer holds another payment under this key",
                "an earlier attempt under this Idempotency-Key sent another payment to the acquirer; send that payment"
                        + " again with this key, or this one under a new key", null, 1);
    }

    static DemoProblem acquirerFailed(int status) {
        return new DemoProblem(502, "acquirer-failed", "Acquirer failed", "the acquirer answered " + status, null, 1);
    }

    static DemoProblem databaseUnavailable() {
        return new DemoProblem(503, "database-unavailable", "Database unavailable",
                "the payment could not be stored; retry with the same Idempotency-Key", null, 1);
    }

    static DemoProblem commitFailed() {
        return new DemoProblem(503, "commit-failed", "Commit failed",
                "the payment could not be committed; retry with the same Idempotency-Key", null, 1);
    }

    /** An error of the HTTP layer (unknown path or method, wrong media type, unreadable body) with its status. */
    static DemoProblem http(int status, String reason) {
        String title = reason == null ? "HTTP " + status : reason;
        String detail = status == 400 ? "the request body does not match the API (unknown field or wrong type)" : title;
        return new DemoProblem(status, "http-" + status, title, detail, null, null);
    }

    /** The problem+json response. */
    Response toResponse() {
        JsonObjectBuilder json = Json.createObjectBuilder()
                .add("type", TYPE_BASE + slug)
                .add("title", title)
                .add("status", status)
                .add("detail", getMessage());
        if (paymentId != null) {
            json.add("paymentId", paymentId);
        }
        Response.ResponseBuilder response = Response.status(status).type("application/problem+json")
                .entity(json.build().toString());
        if (retryAfter != null) {
            response.header("Retry-After", retryAfter);
        }
        return response.build();
    }
}
