package dev.idempotency.core;

import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Where an endpoint's API version is read for the fingerprint, resolved once at deployment from
 * {@code idempotency.api-version}: a request header, a segment of the request path, or nowhere.
 *
 * @param header  the header's name, or null
 * @param segment the zero-based path segment, or -1
 */
public record ApiVersionSource(String header, int segment) {
    /** No API version: every request has the empty one. */
    public static final ApiVersionSource NONE = new ApiVersionSource(null, -1);

    /**
     * Parses {@code header:<name>}, {@code path-segment:<n>} or the empty string.
     *
     * @throws IllegalArgumentException for anything else
     */
    public static ApiVersionSource parse(String value) {
        Objects.requireNonNull(value, "value");
        if (value.isEmpty()) {
            return NONE;
        }
        if (value.matches("header:.+")) {
            return new ApiVersionSource(value.substring("header:".length()), -1);
        }
        if (value.matches("path-segment:\\d{1,4}")) {
            return new ApiVersionSource(null, Integer.parseInt(value.substring("path-segment:".length())));
        }
        throw new IllegalArgumentException("must be header:<name>, path-segment:<n> or empty");
    }

    /** The request's API version ("" when the source is absent from the request). */
    public String read(Function<String, List<String>> headers, String path) {
        if (header != null) {
            List<String> values = headers.apply(header);
            return values.isEmpty() ? "" : String.join(",", values);
        }
        if (segment >= 0) {
            int seen = 0;
            for (String part : path.split("/")) {
                if (part.isEmpty()) {
                    continue;
                }
                if (seen++ == segment) {
                    return part;
                }
            }
        }
        return "";
    }
}
