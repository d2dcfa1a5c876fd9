package dev.idempotency;

import java.util.Optional;

/**
 * The idempotent operation the current request runs, injectable anywhere in its call chain
 * ({@code @Inject IdempotencyContext}). Outside an {@link Idempotent} method it is inactive.
 */
public interface IdempotencyContext {

    /** Whether the current call runs inside an idempotent operation. */
    boolean isActive();

    /** The client's key as received (after Structured-Field unquoting). */
    Optional<String> key();

    /** The operation's scope: tenant, principal, endpoint and key. */
    Optional<Scope> scope();

    /**
     * The operation's tenant, without its key. A method that reads only its tenant and principal, and derives no
     * downstream key, leaves the library free to tell its client that a new key is safe after a failure that
     * committed nothing ({@code Idempotency-State: not-applied;next=new-key}); {@link #key()}, {@link #scope()} and
     * {@link #derive} hand the key out, after which a failure says {@code next=same-key} (something may have used it).
     */
    default Optional<String> tenant() {
        return scope().map(Scope::tenant);
    }

    /** The operation's principal, without its key ({@link #tenant()}). */
    default Optional<String> principal() {
        return scope().map(Scope::principal);
    }

    /** How many times this operation has been started, 1 for the first execution. */
    int attempt();

    /**
     * A key for a downstream call, the same on every retry and takeover of this operation and different
     * for each {@code purpose} ({@code derive("acquirer.charge")}), across a rotation of the server's secret
     * too. It is a hash of the record's primary key, itself an HMAC of the scope under the server's secret: a
     * downstream system that receives it cannot confirm a guessed client key, order number or principal
     * without that secret.
     *
     * @throws IllegalStateException when {@link #isActive()} is false
     */
    String derive(String purpose);
}
