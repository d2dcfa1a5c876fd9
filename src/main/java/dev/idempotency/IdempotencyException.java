package dev.idempotency;

/**
 * The root of the library's exceptions: a request the protocol answers with a {@link Problem} instead
 * of running the method. The library's JAX-RS mapper turns it into {@code application/problem+json};
 * it maps nothing else.
 */
public class IdempotencyException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient Problem problem;

    public IdempotencyException(Problem problem) {
        super(problem.type().slug() + ": " + problem.detail());
        this.problem = problem;
    }

    public IdempotencyException(Problem problem, Throwable cause) {
        super(problem.type().slug() + ": " + problem.detail(), cause);
        this.problem = problem;
    }

    /** The answer the client gets. */
    public Problem problem() {
        return problem;
    }
}
