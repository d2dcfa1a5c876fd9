package dev.idempotency.jaxrs;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Problem;
import dev.idempotency.core.Operation;
import dev.idempotency.http.ExchangeStage;
import dev.idempotency.deployment.Assembly;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;

/** Maps the library's own exceptions, and only those, to {@code application/problem+json}. */
public class IdempotencyExceptionMapper implements ExceptionMapper<IdempotencyException> {
    private final Collaborators collaborators = new Collaborators();

    @Override
    public Response toResponse(IdempotencyException exception) {
        Assembly assembly = collaborators.assembly();
        // The request's own rejection: thrown by its admission, or after its execution by the library (superseded,
        // rolled back). One thrown by the method it ran (a business method's call) is that method's failure.
        ExchangeStage stage = collaborators.exchange().stage();
        Operation rejected = stage instanceof ExchangeStage.Admitting admitting ? admitting.operation()
                : stage instanceof ExchangeStage.Settled settled && settled.reply().isEmpty() ? settled.operation() : null;
        if (rejected != null) {
            assembly.events().rejected(rejected.policy().endpoint(), rejected.scopeKey(), exception);
        }
        // Thrown by the run this request holds a claim for: nothing of it committed, whatever the problem's type says.
        Problem problem = exception.problem();
        return assembly.problems().toResponse(collaborators.exchange().failureState(problem.status())
                .map(problem::withState).orElse(problem));
    }
}
