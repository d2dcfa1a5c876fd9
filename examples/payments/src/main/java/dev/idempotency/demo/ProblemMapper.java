package dev.idempotency.demo;

import jakarta.persistence.PersistenceException;
import jakarta.transaction.RollbackException;
import jakarta.transaction.TransactionalException;
import jakarta.ws.rs.ProcessingException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The demo's one exception mapper: every error of its API is an RFC 9457 problem. A 4xx is a final outcome
 * for the library (stored and replayed), a 5xx a retryable one (the retry runs again); the library's own
 * problems keep their mapper, which is closer to their type.
 */
@Provider
public class ProblemMapper implements ExceptionMapper<Exception> {
    private static final Logger LOG = Logger.getLogger(ProblemMapper.class.getName());

    @Override
    public Response toResponse(Exception e) {
        return problemOf(e).toResponse();
    }

    /**
     * The same mapping for a commit that failed under {@code @Transactional}: Jersey (Payara) brings a mapper of
     * its own for {@link TransactionalException}, closer to the type than {@code Exception}, which gives up with
     * the container's HTML 500 when the cause has no mapper of its own; this one is as close, and the
     * application's own mapper is chosen.
     */
    @Provider
    public static class FailedCommit implements ExceptionMapper<TransactionalException> {
        @Override
        public Response toResponse(TransactionalException e) {
            return problemOf(e).toResponse();
        }
    }

    private static DemoProblem problemOf(Exception e) {
        if (e instanceof DemoProblem problem) {
            return problem;
        }
        if (e instanceof WebApplicationException web) {
            // The JAX-RS runtime's own client errors: unknown path or method, wrong media type.
            return DemoProblem.http(web.getResponse().getStatus(), web.getResponse().getStatusInfo().getReasonPhrase());
        }
        if (e instanceof ProcessingException) {
            // The runtime could not read the entity (RESTEasy's JSON-B provider throws this, not a 400).
            return DemoProblem.http(400, "Bad Request");
        }
        if (e instanceof RollbackException || e instanceof TransactionalException) {
            // Narayana's @Transactional throws the commit's RollbackException; others wrap it.
            return DemoProblem.commitFailed();
        }
        if (e instanceof PersistenceException) {
            // A database failure the payment did not expect (connection lost, database restarting); the one
            // expected one, a merchant order already paid, is handled where it happens.
            return DemoProblem.databaseUnavailable();
        }
        LOG.log(Level.WARNING, "unexpected failure", e);
        return DemoProblem.http(500, "Internal Server Error");
    }
}
