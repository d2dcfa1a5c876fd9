package dev.idempotency.spi;

import dev.idempotency.Scope;

import java.util.function.Function;

/**
 * The earlier attempt an {@link OutcomeResolver} is asked about.
 *
 * @param scope    the operation's scope
 * @param previous the record as it was before this takeover
 * @param derive   the operation's derived downstream keys ({@code derive.apply("acquirer.charge")}), the
 *                 same the earlier attempt sent
 */
public record ResolutionRequest(Scope scope, IdempotencyRecord previous, Function<String, String> derive) {
}
