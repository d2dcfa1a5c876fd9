package dev.idempotency.jaxrs;

import dev.idempotency.IdempotencyState;
import dev.idempotency.config.SettingsSource;
import dev.idempotency.config.SettingsSources;
import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.client.ClientRequestContext;
import jakarta.ws.rs.client.ClientRequestFilter;
import jakarta.ws.rs.client.Entity;
import jakarta.ws.rs.client.Invocation;
import jakarta.ws.rs.core.GenericEntity;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MultivaluedHashMap;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.Variant;

import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;

/**
 * The client half of the protocol (docs/adr/0019): one logical operation, one key for all its attempts, retried only
 * where the server's answer says it is safe, and an outcome nobody can tell surfaced as
 * {@link OperationOutcomeUnknownException} instead of guessed.
 *
 * <ul>
 *   <li>The key: the request's own {@code Idempotency-Key} — set by the caller, or derived from the idempotent
 *   operation the call is made in by a {@link DerivedKeyClientFilter} registered beside this one — else a new random
 *   one for this call, kept for all its attempts.</li>
 *   <li>Retried with the same key, after the answer's {@code Retry-After} (1 s without one), within
 *   {@code max-attempts} sends and {@code max-time}: answers whose {@code Idempotency-State} says {@code in-progress}
 *   or {@code unknown}, and {@code not-applied} ones that a retry may get past (5xx, 429). Never with a new key: a
 *   key is switched only by the caller, and only where an answer said {@code next=new-key}.</li>
 *   <li>Against a server that does not send {@code Idempotency-State} (the IETF draft's answers): 425, a 409 with
 *   {@code Retry-After} (in flight), 429, 502, 503 and 504 are retried with the same key, which such a server
 *   deduplicates.</li>
 *   <li>The budget spent on {@code in-progress}/{@code unknown} (or a draft server's in-flight and 502-504 answers):
 *   {@link OperationOutcomeUnknownException}. On {@code not-applied}: the last answer, as it is.</li>
 * </ul>
 *
 * Register it on a JAX-RS client ({@code client.register(new IdempotentRetryFilter(5, Duration.ofSeconds(30)))})
 * or a MicroProfile Rest Client ({@code @RegisterProvider(IdempotentRetryFilter.class)}: the budget from
 * {@code idempotency.client.retry.max-attempts} and {@code .max-time}). It sends each attempt through the same
 * client (its other filters run for every attempt) and answers the call with the last one; the calling thread waits
 * between attempts.
 */
@Priority(Priorities.USER + 2000)
public class IdempotentRetryFilter implements ClientRequestFilter {
    /** The property that marks one attempt sent by this filter: it passes through. */
    static final String ATTEMPT = "dev.idempotency.client.attempt";
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

    /** For {@code @RegisterProvider}: the budget from the configuration (5 sends, 30 s by default). */
    public IdempotentRetryFilter() {
        this(SettingsSources.detect(Thread.currentThread().getContextClassLoader()));
    }

    private IdempotentRetryFilter(SettingsSource settings) {
        this(settings.get("idempotency.client.retry.max-attempts").map(Integer::parseInt).orElse(DEFAULT_ATTEMPTS),
                settings.get("idempotency.client.retry.max-time").map(Duration::parse).orElse(DEFAULT_TIME));
    }

    /** At most {@code maxAttempts} sends within {@code maxTime}. */
    public IdempotentRetryFilter(int maxAttempts, Duration maxTime) {
        this(maxAttempts, maxTime, Timeline.REAL);
    }

    IdempotentRetryFilter(int maxAttempts, Duration maxTime, Timeline time) {
        if (maxAttempts < 1 || maxTime.isNegative()) {
            throw new IllegalArgumentException("IDEM-C001 idempotency.client.retry: max-attempts must be at least 1"
                    + " and max-time not negative, not " + maxAttempts + " and " + maxTime);
        }
        this.maxAttempts = maxAttempts;
        this.maxTime = maxTime;
        this.time = time;
    }

    /** What an answer means for the call. */
    enum Verdict {
        /** The outcome, or a failure no retry gets past: the caller gets it. */
        ANSWER,
        /** Nothing was applied and a retry with the same key may get past it. */
        RETRY,
        /** Nobody can tell yet: retry with the same key; the caller must not get it as an outcome. */
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

    @Override
    public void filter(ClientRequestContext request) {
        if (Boolean.TRUE.equals(request.getProperty(ATTEMPT))) {
            return;
        }
        if (request.getHeaderString(KEY_HEADER) == null) {
            // One key for every attempt of this call: a retry without it would be a new operation.
            request.getHeaders().putSingle(KEY_HEADER, UUID.randomUUID().toString());
        }
        long deadline = time.nanos() + maxTime.toNanos();
        for (int attempt = 1; ; attempt++) {
            Response answer = send(request);
            Optional<IdempotencyState> state = IdempotencyState.parse(answer.getHeaderString(IdempotencyState.HEADER));
            Optional<Duration> retryAfter = retryAfter(answer.getHeaderString(HttpHeaders.RETRY_AFTER));
            Verdict verdict = verdict(answer.getStatus(), state, retryAfter.isPresent());
            Duration delay = retryAfter.orElse(DEFAULT_DELAY);
            boolean spent = attempt >= maxAttempts || time.nanos() + delay.toNanos() > deadline;
            if (verdict == Verdict.ANSWER || (spent && verdict == Verdict.RETRY)) {
                request.abortWith(answer);
                return;
            }
            if (spent) {
                answer.close();
                throw new OperationOutcomeUnknownException("IDEM-W024 " + request.getMethod() + " " + request.getUri()
                        + ": its outcome is not known after " + attempt + " attempts (last answer " + answer.getStatus()
                        + state.map(s -> ", " + s.headerValue()).orElse("") + "); do not send it under a new key:"
                        + " a later call with the same key gets its outcome", answer.getStatus(), state, attempt);
            }
            answer.close();
            try {
                time.waitFor(delay);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new OperationOutcomeUnknownException("IDEM-W024 " + request.getMethod() + " "
                        + request.getUri() + ": interrupted between attempts; its outcome is not known",
                        answer.getStatus(), state, attempt);
            }
        }
    }

    // One attempt through the same client (its other filters run again; this one passes it), read whole so that it
    // can answer the call after the connection is given back.
    private static Response send(ClientRequestContext request) {
        MultivaluedMap<String, Object> headers = new MultivaluedHashMap<>();
        request.getHeaders().forEach((name, values) -> {
            if (!name.equalsIgnoreCase(HttpHeaders.CONTENT_TYPE) && !name.equalsIgnoreCase(HttpHeaders.CONTENT_LENGTH)) {
                headers.put(name, new java.util.ArrayList<>(values));
            }
        });
        Invocation.Builder builder = request.getClient().target(request.getUri()).request().headers(headers);
        for (String name : request.getPropertyNames()) {
            builder.property(name, request.getProperty(name));
        }
        builder.property(ATTEMPT, Boolean.TRUE);
        Response response;
        if (request.hasEntity()) {
            Object entity = request.getEntity();
            Object typed = request.getEntityType() == null || request.getEntityType() == entity.getClass()
                    ? entity : new GenericEntity<>(entity, request.getEntityType());
            response = builder.method(request.getMethod(), Entity.entity(typed, new Variant(request.getMediaType(),
                    (Locale) null, null), request.getEntityAnnotations()));
        } else {
            response = builder.method(request.getMethod());
        }
        try {
            byte[] body = response.hasEntity() ? response.readEntity(byte[].class) : null;
            Response.ResponseBuilder copy = Response.status(response.getStatus());
            response.getStringHeaders().forEach((name, values) -> values.forEach(value -> copy.header(name, value)));
            return body == null ? copy.build() : copy.entity(body).build();
        } finally {
            response.close();
        }
    }

    // Retry-After in seconds (RFC 9110 also allows an HTTP date, which this reads as absent: the default delay).
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
