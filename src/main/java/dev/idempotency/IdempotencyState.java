package dev.idempotency;

import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * What an answer of an idempotent endpoint says about its operation, and what the client may do next: sent on every
 * such answer as the {@value #HEADER} header, an RFC 9651 structured field item
 * ({@code applied;next=stop;expires=@1765152000}), and in problem+json bodies as the members
 * {@value #STATE_MEMBER}, {@value #NEXT_MEMBER} and {@value #EXPIRES_MEMBER} (docs/adr/0019).
 *
 * @param state   whether the operation's work was applied
 * @param next    the client's next step
 * @param expires when the key's record expires, after which the key is new again; empty where no record holds it
 */
public record IdempotencyState(Applied state, Next next, Optional<Instant> expires) {
    /** The response header. */
    public static final String HEADER = "Idempotency-State";
    /** The problem+json member that carries {@link #state()}. */
    public static final String STATE_MEMBER = "idempotencyState";
    /** The problem+json member that carries {@link #next()}. */
    public static final String NEXT_MEMBER = "idempotencyNext";
    /** The problem+json member that carries {@link #expires()} (RFC 3339). */
    public static final String EXPIRES_MEMBER = "idempotencyExpires";

    /** Whether the operation's work was applied. */
    public enum Applied {
        /** Committed: this answer, or its replay, is the outcome. */
        APPLIED("applied"),
        /** Rolled back or never ran: nothing of this request was done here. */
        NOT_APPLIED("not-applied"),
        /** An execution runs, or its outcome is being settled. */
        IN_PROGRESS("in-progress"),
        /** Nobody can tell yet: a commit whose outcome is not settled, a downstream outcome not resolved. */
        UNKNOWN("unknown");

        private final String token;

        Applied(String token) {
            this.token = token;
        }

        /** The structured field token. */
        public String token() {
            return token;
        }
    }

    /** What the client may do next. */
    public enum Next {
        /** Send the same request with the same key again (after {@code Retry-After} when given). */
        SAME_KEY("same-key"),
        /**
         * A new key is safe: the library has proof that nothing of this request was applied and that no downstream
         * key was derived from this one (the same key is safe too, where its record does not hold another outcome).
         */
        NEW_KEY("new-key"),
        /** A final outcome: the same key replays it; a new key would be a new operation. */
        STOP("stop");

        private final String token;

        Next(String token) {
            this.token = token;
        }

        /** The structured field token. */
        public String token() {
            return token;
        }
    }

    public IdempotencyState {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(next, "next");
        Objects.requireNonNull(expires, "expires");
        if (next == Next.NEW_KEY && state != Applied.NOT_APPLIED) {
            // A new key after an answer that may be or become applied would run the operation twice.
            throw new IllegalArgumentException("a new key is only safe when nothing was applied, not when " + state.token);
        }
    }

    /** A state without an expiry. */
    public static IdempotencyState of(Applied state, Next next) {
        return new IdempotencyState(state, next, Optional.empty());
    }

    /** The same state with the record's expiry. */
    public IdempotencyState expiringAt(Instant at) {
        return new IdempotencyState(state, next, Optional.of(at));
    }

    /** The header's value: {@code <state>;next=<next>[;expires=@<epoch seconds>]}. */
    public String headerValue() {
        StringBuilder value = new StringBuilder(48).append(state.token).append(";next=").append(next.token);
        expires.ifPresent(at -> value.append(";expires=@").append(at.getEpochSecond()));
        return value.toString();
    }

    @Override
    public String toString() {
        return headerValue();
    }

    /**
     * Reads a header value; empty for one that is not a state this library knows (an unknown token, a malformed
     * item). Parameters it does not know are ignored, as RFC 9651 asks.
     */
    public static Optional<IdempotencyState> parse(String header) {
        if (header == null) {
            return Optional.empty();
        }
        String[] parts = header.trim().split(";");
        Optional<Applied> state = byToken(Applied.values(), Applied::token, parts[0].trim().toLowerCase(Locale.ROOT));
        Optional<Next> next = Optional.empty();
        Optional<Instant> expires = Optional.empty();
        for (int i = 1; i < parts.length; i++) {
            String[] nameValue = parts[i].trim().split("=", 2);
            String value = nameValue.length == 2 ? nameValue[1].trim() : "";
            if (nameValue[0].equals("next")) {
                next = byToken(Next.values(), Next::token, value.toLowerCase(Locale.ROOT));
            } else if (nameValue[0].equals("expires") && value.startsWith("@")) {
                try {
                    expires = Optional.of(Instant.ofEpochSecond(Long.parseLong(value.substring(1))));
                } catch (NumberFormatException ignored) {
                    // A malformed expiry is left out; the state still holds.
                }
            }
        }
        if (state.isEmpty() || next.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(new IdempotencyState(state.get(), next.get(), expires));
        } catch (IllegalArgumentException contradictory) {
            return Optional.empty();
        }
    }

    private static <T> Optional<T> byToken(T[] values, java.util.function.Function<T, String> tokenOf, String token) {
        for (T value : values) {
            if (tokenOf.apply(value).equals(token)) {
                return Optional.of(value);
            }
        }
        return Optional.empty();
    }
}
