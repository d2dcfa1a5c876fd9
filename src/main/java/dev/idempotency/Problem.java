package dev.idempotency;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * One error answer: an RFC 9457 problem plus the headers that belong to it.
 *
 * @param type       which error; gives the {@code type} URI and the {@code title}
 * @param status     HTTP status (usually {@link ProblemType#defaultStatus()})
 * @param detail     a sentence for this occurrence; never contains the key, a secret or another's data
 * @param retryAfter when the client may try again, sent as {@code Retry-After} in whole seconds
 * @param location   for 202 answers: where the operation's status can be read
 * @param state      what the answer says about the operation and the client's next step, where the place that
 *                   raised it knows more than its type ({@link ProblemType#state()} otherwise)
 */
public record Problem(ProblemType type, int status, String detail, Optional<Duration> retryAfter,
                      Optional<String> location, Optional<IdempotencyState> state) {

    public Problem {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(retryAfter, "retryAfter");
        Objects.requireNonNull(location, "location");
        Objects.requireNonNull(state, "state");
    }

    /** A problem whose state is its type's. */
    public Problem(ProblemType type, int status, String detail, Optional<Duration> retryAfter,
                   Optional<String> location) {
        this(type, status, detail, retryAfter, location, Optional.empty());
    }

    /** A problem with the type's default status and no headers. */
    public static Problem of(ProblemType type, String detail) {
        return new Problem(type, type.defaultStatus(), detail, Optional.empty(), Optional.empty(), Optional.empty());
    }

    /** The same problem with {@code Retry-After}. */
    public Problem retryAfter(Duration delay) {
        return new Problem(type, status, detail, Optional.of(delay), location, state);
    }

    /** The same problem with another HTTP status. */
    public Problem withStatus(int newStatus) {
        return new Problem(type, newStatus, detail, retryAfter, location, state);
    }

    /** The same problem with a {@code Location}. */
    public Problem withLocation(String uri) {
        return new Problem(type, status, detail, retryAfter, Optional.of(uri), state);
    }

    /** The same problem saying {@code known} about the operation. */
    public Problem withState(IdempotencyState known) {
        return new Problem(type, status, detail, retryAfter, location, Optional.of(known));
    }

    /**
     * What this answer says about the operation: as raised, or as its type always says; empty for a problem that is
     * not an answer about an operation (the administrative resource's).
     */
    public Optional<IdempotencyState> answerState() {
        return state.isPresent() ? state : type.state();
    }

    /** {@code Retry-After} in whole seconds, rounded up and at least 1. */
    public Optional<Long> retryAfterSeconds() {
        return retryAfter.map(d -> Math.max(1, (d.toMillis() + 999) / 1000));
    }
}
