package dev.idempotency.jaxrs;

import dev.idempotency.internal.CapturedRequest;
import dev.idempotency.internal.OperationStatus;
import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.internal.IdempotencyRuntime;
import dev.idempotency.spi.IdempotencyRecord;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;

/**
 * The status of the caller's own operation on one endpoint: {@code GET <path>/{key}}. Not a root resource
 * itself (so that scanning the library registers nothing): the application subclasses it with its
 * {@code @Path} and names the endpoint.
 *
 * <pre>{@code
 * @Path("idempotency")
 * public class PaymentOperations extends IdempotencyStatusResource {
 *     protected String endpoint() { return "payments.create"; }
 * }
 * }</pre>
 *
 * A key of another principal or tenant resolves to another scope and so answers 404, exactly as a key
 * that was never used: the answer reveals nothing about other callers.
 */
public abstract class IdempotencyStatusResource {
    @Context
    SecurityContext security;
    @Context
    HttpHeaders headers;
    @Context
    UriInfo uriInfo;

    /** The endpoint name ({@code @Idempotent(endpoint = ...)}) whose operations this resource shows. */
    protected abstract String endpoint();

    @GET
    @Path("{key}")
    @Produces(MediaType.APPLICATION_JSON)
    public Response status(@PathParam("key") String key) {
        IdempotencyRuntime runtime = CDI.current().select(IdempotencyRuntime.class).get();
        CapturedRequest request = new CapturedRequest("GET", uriInfo.getRequestUri().getRawPath(), "", uriInfo.getBaseUri(),
                "", headers.getRequestHeaders(), new byte[0], security, null);
        IdempotencyRecord record = runtime.findOwn(request, endpoint(), key).orElseThrow(() ->
                new IdempotencyException(Problem.of(ProblemType.OPERATION_NOT_FOUND,
                        "no operation with this key for this caller")));
        return Response.ok(OperationStatus.json(record), MediaType.APPLICATION_JSON_TYPE).build();
    }
}
