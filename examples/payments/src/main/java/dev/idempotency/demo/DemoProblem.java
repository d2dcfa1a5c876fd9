package dev.idempotency.demo;

import jakarta.json.Json;
import jakarta.json.JsonObjectBuilder;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

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

    static DemoProblem invalid(String detail) {
        return new DemoProblem(400, "invalid-payment", "Invalid payment", detail, null, null);
    }

    static DemoProblem alreadyPaid(String merchantOrderNo, String paymentId) {
        return new DemoProblem(409, "order-already-paid", "Order already paid", "merchant order " + merchantOrderNo
                + " is already paid by payment " + paymentId, paymentId, null);
    }

    static DemoProblem transientFailure() {
        return new DemoProblem(503, "acquirer-unavailable", "Acquirer temporarily unavailable",
                "the charge could not be confirmed; retry with the same Idempotency-Key", null, 1);
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

    static DemoProblem notFound(String what) {
        return new DemoProblem(404, "not-found", "Not found", what + " not found", null, null);
    }

    static DemoProblem acquirerFailed(int status) {
        return new DemoProblem(502, "acquirer-failed", "Acquirer failed", "the acquirer answered " + status, null, 1);
    }

    /** Renders a {@link DemoProblem}. */
    @Provider
    public static class Mapper implements ExceptionMapper<DemoProblem> {
        @Override
        public Response toResponse(DemoProblem e) {
            JsonObjectBuilder json = Json.createObjectBuilder()
                    .add("type", TYPE_BASE + e.slug)
                    .add("title", e.title)
                    .add("status", e.status)
                    .add("detail", e.getMessage());
            if (e.paymentId != null) {
                json.add("paymentId", e.paymentId);
            }
            Response.ResponseBuilder response = Response.status(e.status).type("application/problem+json")
                    .entity(json.build().toString());
            if (e.retryAfter != null) {
                response.header("Retry-After", e.retryAfter);
            }
            return response.build();
        }
    }
}
