package dev.idempotency.jaxrs;

import dev.idempotency.http.ProblemResponses;
import dev.idempotency.http.CapturedRequest;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.ProblemType;
import dev.idempotency.deployment.Assembly;
import dev.idempotency.http.IdempotentExchange;
import dev.idempotency.endpoints.IdempotentEndpoint;
import dev.idempotency.core.Admission;
import dev.idempotency.core.AdmissionPhase;
import dev.idempotency.core.AnswerStates;
import dev.idempotency.core.Operation;
import dev.idempotency.http.ExchangeStage;
import dev.idempotency.http.OperationStatus;
import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.Providers;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.util.Optional;
import java.util.logging.Logger;

/**
 * Captures an idempotent request before its resource method runs: the buffered body (bounded by
 * {@code idempotency.max-request-bytes}, 413 beyond), headers and security context. Runs after
 * authentication and authorization filters, so that the principal is known.
 */
@Priority(Priorities.AUTHORIZATION + 100)
public class IdempotencyRequestFilter implements ContainerRequestFilter {
    private static final Logger LOG = Logger.getLogger(IdempotencyRequestFilter.class.getName());
    @Context
    ResourceInfo resourceInfo;
    @Context
    Providers providers;
    private final Collaborators collaborators = new Collaborators();

    @Override
    public void filter(ContainerRequestContext context) throws IOException {
        Method method = resourceInfo.getResourceMethod();
        if (method == null || !isIdempotent(method, resourceInfo.getResourceClass())) {
            return;
        }
        Assembly assembly = collaborators.assembly();
        ProblemResponses problems = assembly.problems();
        IdempotentEndpoint idempotent = assembly.method(method);
        if (idempotent == null) {
            // Annotated, but CDI never saw the class: the interceptor would not run, so refuse loudly
            // rather than run unprotected.
            LOG.severe("IDEM-E001 " + method.getDeclaringClass().getName() + "#" + method.getName()
                    + " is @Idempotent but not a CDI bean method the library found; make the resource a CDI bean");
            context.abortWith(problems.toResponse(Problem.of(ProblemType.NOT_CONFIGURED,
                    "this endpoint is not set up for idempotency; the server log says why")));
            return;
        }
        int limit = assembly.maxRequestBytes();
        byte[] body = readAtMost(context.getEntityStream(), context.getLength(), limit);
        if (body == null) {
            reject(context, assembly, idempotent, "", new IdempotencyException(
                    Problem.of(ProblemType.BODY_TOO_LARGE, "the request body exceeds " + limit + " bytes")));
            return;
        }
        context.setEntityStream(new ByteArrayInputStream(body));
        String contentType = context.getHeaderString(HttpHeaders.CONTENT_TYPE);
        java.net.URI uri = context.getUriInfo().getRequestUri();
        CapturedRequest captured = new CapturedRequest(context.getMethod(), uri.getRawPath(), uri.getRawQuery(),
                context.getUriInfo().getBaseUri(), contentType == null ? "" : contentType, context.getHeaders(), body,
                context.getSecurityContext(), providers);
        Operation operation;
        try {
            // Key, scope and fingerprint are checked here, before the runtime reads the entity, so that
            // every bad input gets the library's problem+json and nothing runs.
            operation = idempotent.prepare(captured).orElse(null);
        } catch (IdempotencyException rejected) {
            reject(context, assembly, idempotent, "", rejected);
            return;
        }
        IdempotentExchange exchange = collaborators.exchange();
        exchange.capture(captured, operation);
        if (operation == null) {
            return;
        }
        try {
            // A replay or an in-flight answer is sent from here: the entity is never read for it.
            answerFromRecord(assembly, exchange, captured, operation)
                    .ifPresent(reply -> context.abortWith(Response.status(reply.response().status()).build()));
        } catch (IdempotencyException rejected) {
            reject(context, assembly, idempotent, operation.scopeKey(), rejected);
        }
    }

    /**
     * Admission before the JAX-RS runtime reads the entity: one read of the record, and when it alone
     * answers (a replay, an in-flight answer, a rejection), that answer; nothing is parsed or claimed for it.
     * Otherwise the read goes with the exchange to the interceptor, which claims from there.
     *
     * @throws IdempotencyException for a rejection (mismatch, in flight, store unavailable)
     */
    private static Optional<ExchangeStage.Reply> answerFromRecord(Assembly assembly,
                                                                  IdempotentExchange exchange,
                                                                  CapturedRequest request, Operation op) {
        AdmissionPhase.LookUp lookUp = assembly.protocol().admission().lookUp(op);
        Optional<Admission> answer = lookUp.answer();
        if (answer.isEmpty()) {
            exchange.read(lookUp.record());
            return Optional.empty();
        }
        ExchangeStage.Reply reply;
        if (answer.get() instanceof Admission.Replay replay) {
            reply = new ExchangeStage.Reply(assembly.outcomes().replayed(replay.record()), true,
                    AnswerStates.ofRecord(replay.record(), op.policy().externalSideEffects()));
        } else if (answer.get() instanceof Admission.Accepted accepted) {
            reply = new ExchangeStage.Reply(OperationStatus.accepted(accepted.record(), request,
                    op.policy().statusPath(), op.scope().key(), accepted.retryAfter()), false, AnswerStates.IN_PROGRESS);
        } else {
            throw new IllegalStateException("IDEM-X003 an answer without a claim cannot be " + answer.get());
        }
        exchange.answered(op, reply);
        return Optional.of(reply);
    }

    private static void reject(ContainerRequestContext context, Assembly assembly, IdempotentEndpoint method,
                               String scopeKey, IdempotencyException rejected) {
        assembly.events().rejected(method.name(), scopeKey, rejected);
        context.abortWith(assembly.problems().toResponse(rejected.problem()));
    }

    static boolean isIdempotent(Method method, Class<?> resourceClass) {
        return method.isAnnotationPresent(Idempotent.class)
                || method.getDeclaringClass().isAnnotationPresent(Idempotent.class)
                || (resourceClass != null && resourceClass.isAnnotationPresent(Idempotent.class));
    }

    // Null when the body is longer than the limit.
    private static byte[] readAtMost(InputStream in, int declaredLength, int limit) throws IOException {
        if (in == null) {
            return new byte[0];
        }
        if (declaredLength > limit) {
            return null;
        }
        // A declared length sizes the array exactly; without one, readNBytes grows it as bytes arrive. A
        // byte after that (more than the limit, or more than declared) makes the body too large.
        byte[] body = in.readNBytes(declaredLength >= 0 ? declaredLength : limit);
        return in.read() == -1 ? body : null;
    }
}
