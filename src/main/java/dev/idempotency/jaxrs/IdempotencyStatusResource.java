package dev.idempotency.jaxrs;

import dev.idempotency.IdempotencyState;
import dev.idempotency.core.AnswerStates;

import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.http.CapturedRequest;
import dev.idempotency.http.ResponseSnapshots;
import dev.idempotency.spi.StoredResponse;
import dev.idempotency.http.OperationStatus;
import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.deployment.Assembly;
import dev.idempotency.spi.IdempotencyRecord;
import java.time.Duration;
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
import jakarta.ws.rs.ext.Providers;

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
 * For an {@link dev.idempotency.Idempotent#asynchronous() asynchronous} endpoint it answers {@code 202} with
 * {@code Retry-After} while the task runs, then the task's stored outcome (status, {@code Location}, body, marked
 * {@code Idempotent-Replayed}); a task that ended retryably shows its state, and a retry of the key runs it again.
 * A client that sends {@code Prefer: wait=N} (RFC 7240, N at most 30 seconds) is answered when the task has
 * ended or N seconds have passed, whichever comes first, instead of polling.
 *
 * <p>For a message listener's endpoint it shows the record of the caller's message with that key (the listener's
 * scope, {@code idempotency.endpoints.<endpoint>.message.*}, must name the same tenant and principal as the request
 * does: a producer that sets them from its caller): 404 while the message waits in its queue, then its state; with
 * {@code Prefer: wait=N} the answer comes once it is done.
 *
 * <p>A key of another principal or tenant resolves to another scope and so answers 404, exactly as a key
 * that was never used: the answer reveals nothing about other callers.
 */
public abstract class IdempotencyStatusResource {
    private static final Duration MAX_WAIT = Duration.ofSeconds(30);

    @Context
    SecurityContext security;
    @Context
    HttpHeaders headers;
    @Context
    UriInfo uriInfo;
    @Context
    Providers providers;

    /** The endpoint name ({@code @Idempotent(endpoint = ...)}) whose operations this resource shows. */
    protected abstract String endpoint();

    @GET
    @Path("{key}")
    @Produces(MediaType.APPLICATION_JSON)
    public Response status(@PathParam("key") String key) {
        Assembly assembly = AssemblyResolver.of(providers);
        CapturedRequest request = new CapturedRequest("GET", uriInfo.getRequestUri().getRawPath(), "", uriInfo.getBaseUri(),
                "", headers.getRequestHeaders(), new byte[0], security, null);
        EndpointPolicy policy = assembly.policy(endpoint());
        boolean consumesMessages = policy != null && policy.messages().isPresent();
        Duration wait = policy == null || !(policy.asynchronous() || consumesMessages) ? Duration.ZERO
                : preferredWait(headers);
        // A message may still wait in its queue: no record yet is no answer yet.
        IdempotencyRecord record = assembly.statusLookups().findOwnWaiting(request, endpoint(), key, wait, consumesMessages)
                .orElseThrow(() -> new IdempotencyException(Problem.of(ProblemType.OPERATION_NOT_FOUND,
                        "no operation with this key for this caller")));
        // What the record says, and until when: after its expiry the key is new again.
        String state = AnswerStates.ofRecord(record, policy.externalSideEffects()).headerValue();
        if (!policy.asynchronous()) {
            return Response.ok(OperationStatus.json(record), MediaType.APPLICATION_JSON_TYPE)
                    .header(IdempotencyState.HEADER, state).build();
        }
        // The task's status: 202 while it runs, then its stored outcome; a retryable end leaves the state for
        // the client, whose retry of the key runs the operation again.
        return switch (record.status()) {
            case PROCESSING -> Response.accepted(OperationStatus.json(record)).type(MediaType.APPLICATION_JSON_TYPE)
                    .header(HttpHeaders.RETRY_AFTER, OperationStatus.retryAfterSeconds(policy.retryAfterMax()))
                    .header(IdempotencyState.HEADER, state).build();
            case SUCCEEDED, FAILED_FINAL -> outcome(assembly.outcomes().replayed(record), state);
            case FAILED_RETRYABLE -> Response.ok(OperationStatus.json(record), MediaType.APPLICATION_JSON_TYPE)
                    .header(IdempotencyState.HEADER, state).build();
        };
    }

    // RFC 7240 "Prefer: wait=N": how long the client is ready to wait for the outcome, at most MAX_WAIT.
    private static Duration preferredWait(HttpHeaders headers) {
        for (String prefer : headers.getRequestHeader("Prefer") == null ? java.util.List.<String>of()
                : headers.getRequestHeader("Prefer")) {
            for (String preference : prefer.split(",")) {
                String[] nameValue = preference.trim().split("=", 2);
                if (nameValue.length == 2 && nameValue[0].trim().equalsIgnoreCase("wait")) {
                    try {
                        long seconds = Long.parseLong(nameValue[1].trim().replace("\"", ""));
                        return Duration.ofSeconds(Math.max(0, Math.min(seconds, MAX_WAIT.toSeconds())));
                    } catch (NumberFormatException ignored) {
                        // An unparsable preference is ignored, as RFC 7240 asks.
                    }
                }
            }
        }
        return Duration.ZERO;
    }

    private static Response outcome(StoredResponse stored, String state) {
        Response.ResponseBuilder response = Response.status(stored.status()).header(IdempotencyState.HEADER, state);
        stored.headers().forEach((name, values) -> {
            if (!name.equalsIgnoreCase(HttpHeaders.CONTENT_TYPE) && !name.equalsIgnoreCase(IdempotencyState.HEADER)) {
                values.forEach(value -> response.header(name, value));
            }
        });
        String contentType = stored.header(HttpHeaders.CONTENT_TYPE);
        if (stored.body().length > 0) {
            response.entity(stored.body()).type(contentType);
        }
        return response.header(ResponseSnapshots.REPLAYED_HEADER, "true").build();
    }
}
