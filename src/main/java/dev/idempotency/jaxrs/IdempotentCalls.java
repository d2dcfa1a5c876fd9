package dev.idempotency.jaxrs;

import dev.idempotency.IdempotencyState;
import dev.idempotency.config.SettingsSource;
import dev.idempotency.config.SettingsSources;
import jakarta.ws.rs.ProcessingException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;

/**
 * The client half of the protocol (docs/adr/0019), for calls from one Jakarta EE application to another through a
 * JAX-RS client or a MicroProfile Rest Client: one logical operation, one key for all its attempts, sent again only
 * where the answer says that is safe, and an outcome nobody can tell surfaced as
 * {@link OperationOutcomeUnknownException} instead of guessed.
 *
 * <pre>
 * IdempotentCalls calls = IdempotentCalls.configured();            // or IdempotentCalls.within(5, Duration.ofSeconds(30))
 * ChargeView charge = calls.run(idempotency.derive("acquirer.charge"), key -&gt; acquirer.charge(key, request));
 * Response answer = calls.run(key -&gt; target.request().header("Idempotency-Key", key).post(entity));
 * </pre>
 *
 * <ul>
 *   <li>The key: the one the caller names (inside an idempotent operation, derive it: the downstream then sees the
 *   same key on every attempt and every takeover of the operation), else a new random one for this run. An attempt
 *   that sets its key otherwise (a {@link DerivedKeyClientFilter}) may ignore the one it is given.</li>
 *   <li>Sent again with the same key, after the answer's {@code Retry-After} (1 s without one), within the budget
 *   ({@code max-attempts} sends, {@code max-time}): answers whose {@code Idempotency-State} says {@code in-progress}
 *   or {@code unknown}; {@code not-applied} ones a retry may get past (5xx, 429); an attempt that got no answer (a
 *   connection lost, a timeout: the request may have been applied, and the same key is what makes asking again
 *   safe). From a server without {@code Idempotency-State} (the IETF draft's answers): 425, a 409 with
 *   {@code Retry-After} (in flight), 429, 502, 503 and 504. Never under a new key: only the caller switches keys, and
 *   only where an answer said {@code next=new-key}.</li>
 *   <li>The budget spent where nobody can tell ({@code in-progress}, {@code unknown}, no answer, a draft server's
 *   in-flight and 502-504): {@link OperationOutcomeUnknownException}. On {@code not-applied}: the last answer.</li>
 * </ul>
 *
 * An attempt answers with a {@link Response} (read here, then handed back), an entity (a 2xx: the outcome), or a
 * {@link WebApplicationException} (what a Rest Client throws for a 4xx or 5xx: rethrown when it is the answer). The
 * calling thread waits between attempts.
 */
public final class IdempotentCalls {
    static final String KEY_HEADER = "Idempotency-Key";
    private static final Duration DEFAULT_DELAY = Duration.ofSeconds(1);
    private static final int DEFAULT_ATTEMPTS = 5;
    private static final Duration DEFAULT_TIME = Duration.ofSeconds(30);

    private final int maxAttempts;
    private final Duration maxTime;
    private final Timeline time;

    /** The time the budget is counted in, and how the calling thread waits between attempts (a test keeps its own). */
    interface Timeline {
        Timeline REAL = new Timeline() {
            @Override
            public long nanos() {
                return System.nanoTime();
            }

            @Override
            public void waitFor(Duration delay) throws InterruptedException {
                Thread.sleep(delay.toMillis());
            }
        };

        long nanos();

        void waitFor(Duration delay) throws InterruptedException;
    }

    IdempotentCalls(int maxAttempts, Duration maxTime, Timeline time) {
        if (maxAttempts < 1 || maxTime.isNegative()) {
            throw new IllegalArgumentException("IDEM-C001 idempotency.client.retry: max-attempts must be at least 1"
                    + " and max-time not negative, not " + maxAttempts + " and " + maxTime);
        }
        this.maxAttempts = maxAttempts;
        this.maxTime = maxTime;
        this.time = Objects.requireNonNull(time, "time");
    }

    /** At most {@code maxAttempts} sends within {@code maxTime}. */
    public static IdempotentCalls within(int maxAttempts, Duration maxTime) {
        return new IdempotentCalls(maxAttempts, maxTime, Timeline.REAL);
    }

    /**
     * The budget from the configuration: {@code idempotency.client.retry.max-attempts} (5) and
     * {@code idempotency.client.retry.max-time} (PT30S).
     */
    public static IdempotentCalls configured() {
        SettingsSource settings = SettingsSources.detect(Thread.currentThread().getContextClassLoader());
        String attempts = settings.get("idempotency.client.retry.max-attempts").orElse(String.valueOf(DEFAULT_ATTEMPTS));
        String total = settings.get("idempotency.client.retry.max-time").orElse(DEFAULT_TIME.toString());
        try {
            return within(Integer.parseInt(attempts.trim()), Duration.parse(total.trim()));
        } catch (RuntimeException invalid) {
            throw new IllegalArgumentException("IDEM-C001 idempotency.client.retry.max-attempts (" + attempts
                    + ") or .max-time (" + total + ") is not a number of attempts and an ISO-8601 duration", invalid);
        }
    }

    /** Runs one operation under a new random key, the same for all its attempts. */
    public <T> T run(Function<String, T> attempt) {
        return run(UUID.randomUUID().toString(), attempt);
    }

    /** Runs one operation under {@code key}: {@code attempt} sends it once with that key, as often as the answers allow. */
    public <T> T run(String key, Function<String, T> attempt) {
        Objects.requireNonNull(key, "key");
        long deadline = time.nanos() + maxTime.toNanos();
        for (int sent = 1; ; sent++) {
            Outcome<T> outcome = attempt(key, attempt);
            Verdict verdict = outcome.verdict();
            Duration delay = outcome.retryAfter().orElse(DEFAULT_DELAY);
            boolean spent = sent >= maxAttempts || time.nanos() + delay.toNanos() > deadline;
            if (verdict == Verdict.ANSWER || (spent && verdict == Verdict.RETRY)) {
                return outcome.answer();
            }
            outcome.discard();
            if (spent) {
                throw unknown(outcome, sent, "its outcome is not known after " + sent + " attempts");
            }
            try {
                time.waitFor(delay);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw unknown(outcome, sent, "interrupted after " + sent + " attempts; its outcome is not known");
            }
        }
    }

    private static OperationOutcomeUnknownException unknown(Outcome<?> last, int sent, String what) {
        OperationOutcomeUnknownException unknown = new OperationOutcomeUnknownException("IDEM-W024 an idempotent call: "
                + what + " (last answer " + (last.status() == 0 ? "none" : last.status())
                + last.state().map(s -> ", " + s.headerValue()).orElse("") + "); do not send it under a new key: a"
                + " later call with the same key gets its outcome", last.status(), last.state(), sent);
        last.failure().ifPresent(unknown::initCause);
        return unknown;
    }

    // One attempt, and what its answer says.
    @SuppressWarnings("unchecked")
    private static <T> Outcome<T> attempt(String key, Function<String, T> attempt) {
        T result;
        try {
            result = attempt.apply(key);
        } catch (WebApplicationException answered) {
            Response response = responseOf(answered);
            return new Outcome<>(null, answered, null, response == null ? 0 : response.getStatus(),
                    response == null ? null : response.getHeaderString(IdempotencyState.HEADER),
                    response == null ? null : response.getHeaderString(HttpHeaders.RETRY_AFTER));
        } catch (ProcessingException noAnswer) {
            // Nothing came back: the request may or may not have been applied. The same key makes asking again safe.
            return new Outcome<>(null, null, noAnswer, 0, null, null);
        }
        if (result instanceof Response response) {
            return new Outcome<>(result, null, null, response.getStatus(),
                    response.getHeaderString(IdempotencyState.HEADER), response.getHeaderString(HttpHeaders.RETRY_AFTER));
        }
        return new Outcome<>(result, null, null, 200, null, null);
    }

    // RESTEasy gives a caller inside a server a copy of the answer without its headers (so that a downstream's headers
    // do not pass on by accident); the answer as received is one unwrap() away.
    private static Response responseOf(WebApplicationException answered) {
        try {
            Object original = answered.getClass().getMethod("unwrap").invoke(answered);
            if (original instanceof WebApplicationException received && received.getResponse() != null) {
                return received.getResponse();
            }
        } catch (ReflectiveOperationException | RuntimeException notWrapped) {
            // Another runtime's exception: its response is the answer as received.
        }
        return answered.getResponse();
    }

    /** What one attempt gave: a result, the exception that carried its answer, or the failure that left none. */
    private record Outcome<T>(T result, WebApplicationException thrown, ProcessingException noAnswer, int status,
                              String stateHeader, String retryAfterHeader) {
        Optional<IdempotencyState> state() {
            return IdempotencyState.parse(stateHeader);
        }

        Optional<Duration> retryAfter() {
            return IdempotentCalls.retryAfter(retryAfterHeader);
        }

        Verdict verdict() {
            return noAnswer != null ? Verdict.RETRY_UNKNOWN
                    : thrown == null && !(result instanceof Response) ? Verdict.ANSWER
                    : IdempotentCalls.verdict(status, state(), retryAfterHeader != null);
        }

        Optional<Throwable> failure() {
            return Optional.ofNullable(noAnswer != null ? noAnswer : thrown);
        }

        T answer() {
            if (thrown != null) {
                throw thrown;
            }
            return result;
        }

        // An answer that is not handed back gives its connection back.
        void discard() {
            if (result instanceof Response response) {
                response.close();
            } else if (thrown != null && thrown.getResponse() != null) {
                thrown.getResponse().close();
            }
        }
    }

    /** What an answer means for the call. */
    enum Verdict {
        /** The outcome, or a failure no retry gets past: the caller gets it. */
        ANSWER,
        /** Nothing was applied and a retry with the same key may get past it. */
        RETRY,
        /** Nobody can tell yet: ask again with the same key; it must not reach the caller as an outcome. */
        RETRY_UNKNOWN
    }

    /** What an answer of {@code status} saying {@code state} (absent from a server without the header) means. */
    static Verdict verdict(int status, Optional<IdempotencyState> state, boolean hasRetryAfter) {
        if (state.isPresent()) {
            return switch (state.get().state()) {
                case APPLIED -> Verdict.ANSWER;
                case IN_PROGRESS, UNKNOWN -> Verdict.RETRY_UNKNOWN;
                case NOT_APPLIED -> state.get().next() != IdempotencyState.Next.STOP && (status >= 500 || status == 429)
                        ? Verdict.RETRY : Verdict.ANSWER;
            };
        }
        if (status == 425 || (status == 409 && hasRetryAfter) || status == 502 || status == 503 || status == 504) {
            return Verdict.RETRY_UNKNOWN;
        }
        return status == 429 ? Verdict.RETRY : Verdict.ANSWER;
    }

    // Retry-After in seconds (RFC 9110 also allows an HTTP date, read here as absent: the default delay).
    static Optional<Duration> retryAfter(String header) {
        if (header == null) {
            return Optional.empty();
        }
        try {
            long seconds = Long.parseLong(header.trim());
            return seconds < 0 ? Optional.empty() : Optional.of(Duration.ofSeconds(seconds));
        } catch (NumberFormatException dateOrJunk) {
            return Optional.empty();
        }
    }
}
