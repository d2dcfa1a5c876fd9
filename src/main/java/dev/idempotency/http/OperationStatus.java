package dev.idempotency.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.UriBuilder;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The state of an operation as its owner may read it (status resource, 202 answers): state, resource id,
 * attempts and timestamps. Never the fingerprint, the owner token or the stored body.
 */
public final class OperationStatus {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private OperationStatus() {
    }

    /** The JSON representation. */
    public static byte[] json(IdempotencyRecord record) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("state", record.status().name());
        record.resourceId().ifPresent(id -> json.put("resourceId", id));
        record.response().ifPresent(r -> json.put("responseStatus", r.status()));
        json.put("attempts", record.attempts());
        json.put("createdAt", record.createdAt().toString());
        json.put("updatedAt", record.updatedAt().toString());
        json.put("expiresAt", record.expiresAt().toString());
        try {
            return MAPPER.writeValueAsBytes(json);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a map of strings and numbers always serializes", e);
        }
    }

    /** A {@code Retry-After} in whole seconds, rounded up, at least 1. */
    public static long retryAfterSeconds(Duration retryAfter) {
        return Math.max(1, (retryAfter.toMillis() + 999) / 1000);
    }

    /** The 202 answer to an in-flight duplicate: where to poll, and when. */
    public static StoredResponse accepted(IdempotencyRecord record, CapturedRequest request, String statusPath,
                                          String key, Duration retryAfter) {
        URI location = UriBuilder.fromUri(request.baseUri()).path(statusPath).path("{key}").build(key);
        Map<String, List<String>> headers = new LinkedHashMap<>();
        headers.put(HttpHeaders.CONTENT_TYPE, List.of(MediaType.APPLICATION_JSON));
        headers.put(HttpHeaders.LOCATION, List.of(location.toString()));
        headers.put(HttpHeaders.RETRY_AFTER, List.of(String.valueOf(retryAfterSeconds(retryAfter))));
        return new StoredResponse(202, headers, json(record), StoredResponse.PLAIN);
    }
}
