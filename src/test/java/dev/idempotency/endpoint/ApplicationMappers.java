package dev.idempotency.endpoint;

import jakarta.persistence.PersistenceException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;

/** The test application's own exception mappers: the library records what they render. */
public final class ApplicationMappers {
    private ApplicationMappers() {
    }

    public static class Rejected implements ExceptionMapper<PaymentRejected> {
        @Override
        public Response toResponse(PaymentRejected e) {
            return Response.status(400).type("application/problem+json")
                    .entity("{\"type\":\"https://demo.test/invalid\",\"status\":400,\"detail\":\"" + e.getMessage() + "\"}")
                    .build();
        }
    }

    public static class Unavailable implements ExceptionMapper<AcquirerUnavailable> {
        @Override
        public Response toResponse(AcquirerUnavailable e) {
            return Response.status(503).header("Retry-After", "1").type("application/problem+json")
                    .entity("{\"type\":\"https://demo.test/unavailable\",\"status\":503}").build();
        }
    }

    public static class Declined implements ExceptionMapper<PaymentDeclined> {
        @Override
        public Response toResponse(PaymentDeclined e) {
            return declined("declined", e.paymentId);
        }
    }

    public static class Expired implements ExceptionMapper<PaymentDeclined.CardExpired> {
        @Override
        public Response toResponse(PaymentDeclined.CardExpired e) {
            return declined("card-expired", e.paymentId);
        }
    }

    public static class Flagged implements ExceptionMapper<PaymentDeclined.Flagged> {
        @Override
        public Response toResponse(PaymentDeclined.Flagged e) {
            return declined("flagged", e.paymentId);
        }
    }

    private static Response declined(String type, String paymentId) {
        return Response.status(402).type("application/problem+json").entity("{\"type\":\"https://demo.test/" + type
                + "\",\"status\":402,\"payment\":\"" + paymentId + "\"}").build();
    }

    public static class Duplicate implements ExceptionMapper<PersistenceException> {
        @Override
        public Response toResponse(PersistenceException e) {
            return Response.status(409).type("application/problem+json")
                    .entity("{\"type\":\"https://demo.test/duplicate-order\",\"status\":409}").build();
        }
    }
}
