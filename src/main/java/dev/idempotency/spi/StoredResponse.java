package dev.idempotency.spi;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The first outcome of an operation as kept for replay: status, the replayed headers and the body bytes
 * exactly as first sent (or their ciphertext, per {@link #bodyEncoding()}).
 *
 * @param status       HTTP status
 * @param headers      replayed headers in order (names as sent); never {@code Set-Cookie} or credentials
 * @param body         the body bytes, possibly empty; ciphertext when {@link #bodyEncoding()} says so
 * @param bodyEncoding {@link #PLAIN}, {@link #OMITTED} (minimal storage) or {@code aes-gcm:<keyId>}
 */
public record StoredResponse(int status, Map<String, List<String>> headers, byte[] body, String bodyEncoding) {
    /** The body is stored as sent. */
    public static final String PLAIN = "plain";
    /** The body is not stored; it is rebuilt on replay. */
    public static final String OMITTED = "omitted";

    public StoredResponse {
        if (status < 100 || status > 599) {
            throw new IllegalArgumentException("HTTP status out of range: " + status);
        }
        Objects.requireNonNull(bodyEncoding, "bodyEncoding");
        Map<String, List<String>> copy = new LinkedHashMap<>();
        headers.forEach((name, values) -> copy.put(name, List.copyOf(values)));
        headers = java.util.Collections.unmodifiableMap(copy);
        body = body == null ? new byte[0] : body.clone();
    }

    @Override
    public byte[] body() {
        return body.clone();
    }

    /** The first value of a header, compared case-insensitively, or null. */
    public String header(String name) {
        for (Map.Entry<String, List<String>> e : headers.entrySet()) {
            if (e.getKey().equalsIgnoreCase(name) && !e.getValue().isEmpty()) {
                return e.getValue().get(0);
            }
        }
        return null;
    }

    /** A copy with another body and encoding (encryption, minimal storage). */
    public StoredResponse withBody(byte[] newBody, String newEncoding) {
        return new StoredResponse(status, headers, newBody, newEncoding);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StoredResponse r && r.status == status && r.headers.equals(headers)
                && Arrays.equals(r.body, body) && r.bodyEncoding.equals(bodyEncoding);
    }

    @Override
    public int hashCode() {
        return Objects.hash(status, headers, Arrays.hashCode(body), bodyEncoding);
    }

    @Override
    public String toString() {
        return "StoredResponse[status=" + status + ", headers=" + headers.keySet() + ", body=" + body.length
                + " bytes, " + bodyEncoding + "]";
    }
}
