package dev.idempotency.demo;

import jakarta.json.Json;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

/**
 * The JAX-RS runtime's own client errors (an unreadable body, an unknown path or method, a wrong media
 * type) as problem+json with their status, so that every error of the API has the same shape.
 */
@Provider
public class WebApplicationProblems implements ExceptionMapper<WebApplicationException> {
    @Override
    public Response toResponse(WebApplicationException e) {
        return problem(e.getResponse().getStatus(), e.getResponse().getStatusInfo().getReasonPhrase());
    }

    /** The runtime could not read the entity (RESTEasy's JSON-B provider throws this, not a 400). */
    @Provider
    public static class Unreadable implements ExceptionMapper<jakarta.ws.rs.ProcessingException> {
        @Override
        public Response toResponse(jakarta.ws.rs.ProcessingException e) {
            return problem(400, "Bad Request");
        }
    }

    static Response problem(int status, String reason) {
        String detail = status == 400 ? "the request body does not match the API (unknown field or wrong type)"
                : reason == null ? "HTTP " + status : reason;
        return Response.status(status).type("application/problem+json")
                .entity(Json.createObjectBuilder()
                        .add("type", DemoProblem.TYPE_BASE + "http-" + status)
                        .add("title", reason == null ? "HTTP " + status : reason)
                        .add("status", status)
                        .add("detail", detail)
                        .build().toString())
                .build();
    }
}
