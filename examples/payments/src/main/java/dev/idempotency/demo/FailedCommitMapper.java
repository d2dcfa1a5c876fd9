package dev.idempotency.demo;

import jakarta.transaction.RollbackException;
import jakarta.transaction.TransactionalException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

/**
 * A transaction that could not commit: nothing happened, the client may retry with the same key (503).
 * Narayana's {@code @Transactional} throws the {@link RollbackException} of the commit itself; other
 * implementations wrap it in a {@link TransactionalException}.
 */
public final class FailedCommitMapper {
    private FailedCommitMapper() {
    }

    static Response commitFailed() {
        return Response.status(503).header("Retry-After", 1).type("application/problem+json")
                .entity("{\"type\":\"" + DemoProblem.TYPE_BASE + "commit-failed\",\"title\":\"Commit failed\",\"status\":503,"
                        + "\"detail\":\"the payment could not be committed; retry with the same Idempotency-Key\"}")
                .build();
    }

    /** The commit rolled back. */
    @Provider
    public static class RolledBack implements ExceptionMapper<RollbackException> {
        @Override
        public Response toResponse(RollbackException e) {
            return commitFailed();
        }
    }

    /** The {@code @Transactional} interceptor failed around the commit. */
    @Provider
    public static class Transactional implements ExceptionMapper<TransactionalException> {
        @Override
        public Response toResponse(TransactionalException e) {
            return commitFailed();
        }
    }
}
