package dev.idempotency;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks the parameter of an {@link Idempotent} CDI business method (neither a JAX-RS resource method nor a message
 * listener) that holds the operation's idempotency key: a business key the caller keeps for the same intent, such
 * as a transfer id or a payment reference, never one made up per call. Its type is a {@link CharSequence}, a
 * {@link java.util.UUID} or an integral number ({@code long}, {@code int} and their boxes); its text is checked by
 * the same rules as a header's key. A method has exactly one.
 *
 * <pre>{@code
 * @Idempotent(endpoint = "ledger.post")
 * public Receipt post(@IdempotencyKey String transferId, Transfer transfer) { ... }
 * }</pre>
 *
 * A second call with the same key and equal other arguments returns the first call's result (stored as JSON,
 * read back as the method's return type) without running the method; with other arguments it throws
 * {@link IdempotencyException} ({@link ProblemType#FINGERPRINT_MISMATCH}).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
public @interface IdempotencyKey {
}
