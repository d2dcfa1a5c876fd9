package dev.idempotency.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idempotency.IdempotencyState;
import dev.idempotency.Problem;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Renders a {@link Problem} as RFC 9457 {@code application/problem+json}. The body is written here,
 * with the library's own mapper, so that it does not depend on the application's JSON provider.
 */
public final class ProblemResponses {
    /** The problem media type. */
    public static final String PROBLEM_JSON = "application/problem+json";
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final String typeBase;

    public ProblemResponses(String typeBase) {
        this.typeBase = typeBase;
    }

    public Response toResponse(Problem problem) {
        Response.ResponseBuilder builder = Response.status(problem.status())
                .type(PROBLEM_JSON)
                .entity(body(problem));
        problem.retryAfterSeconds().ifPresent(seconds -> builder.header(HttpHeaders.RETRY_AFTER, seconds));
        problem.location().ifPresent(location -> builder.header(HttpHeaders.LOCATION, location));
        problem.answerState().ifPresent(state -> builder.header(IdempotencyState.HEADER, state.headerValue()));
        return builder.build();
    }

    /** The stored outcome of a failure without a response: a problem naming the exception's type, not its message. */
    public dev.idempotency.spi.StoredResponse storedOutcome(dev.idempotency.ProblemType type, String detail) {
        return new dev.idempotency.spi.StoredResponse(type.defaultStatus(), Map.of("Content-Type",
                java.util.List.of(PROBLEM_JSON)), body(Problem.of(type, detail)), dev.idempotency.spi.StoredResponse.PLAIN);
    }

    /** The problem+json bytes. */
    public byte[] body(Problem problem) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("type", typeBase + problem.type().slug());
        json.put("title", problem.type().title());
        json.put("status", problem.status());
        json.put("detail", problem.detail());
        problem.retryAfterSeconds().ifPresent(seconds -> json.put("retryAfter", seconds));
        // RFC 9457 section 3.2 extension members: the same as the header says.
        problem.answerState().ifPresent(state -> {
            json.put(IdempotencyState.STATE_MEMBER, state.state().token());
            json.put(IdempotencyState.NEXT_MEMBER, state.next().token());
            state.expires().ifPresent(at -> json.put(IdempotencyState.EXPIRES_MEMBER, at.toString()));
        });
        try {
            return MAPPER.writeValueAsBytes(json);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a map of strings and numbers always serializes", e);
        }
    }
}
