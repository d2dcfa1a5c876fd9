package dev.idempotency.spi;

import dev.idempotency.Scope;

import java.util.Optional;
import java.util.function.Function;

/**
 * The earlier attempt an {@link OutcomeResolver} is asked about.
 *
 * @param scope    the operation's scope, with the client's key; empty when the library's settler asks about an
 *                 operation that no client retried (only the key's digest is stored, never the key)
 * @param previous the record as it was before this takeover
 * @param derive   the operation's derived downstream keys ({@code derive.apply("acquirer.charge")}), the
 *                 same the earlier attempt sent
 */
public record ResolutionRequest(Optional<Scope> scope, IdempotencyRecord previous, Function<String, String> derive) {

    /** The endpoint of the operation. */
    public String endpoint() {
        return previous.endpoint();
    }
}
