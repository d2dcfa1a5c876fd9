package dev.idempotency.core;

import java.util.Objects;

/**
 * What of a request goes into its fingerprint.
 *
 * @param method      HTTP method, upper case
 * @param path        the request path, without query
 * @param contentType the media type as sent (parameters included), or {@code ""}
 * @param apiVersion  the API version (configured header or path segment), or {@code ""}
 * @param principal   the caller
 * @param body        the body bytes as received
 * @param query       the canonical query ({@link QueryString}), or {@code ""} for none or when the endpoint
 *                    leaves the query out of its fingerprint
 */
public record RequestFacts(String method, String path, String contentType, String apiVersion, String principal,
                           byte[] body, String query) {
    public RequestFacts {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(contentType, "contentType");
        Objects.requireNonNull(apiVersion, "apiVersion");
        Objects.requireNonNull(principal, "principal");
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(query, "query");
    }

    /** A request without a query string. */
    public RequestFacts(String method, String path, String contentType, String apiVersion, String principal,
                        byte[] body) {
        this(method, path, contentType, apiVersion, principal, body, "");
    }

    /** Whether the body is JSON by its media type ({@code application/json} or {@code +json}). */
    public boolean isJson() {
        String type = mediaType();
        return type.equals("application/json") || type.endsWith("+json");
    }

    /** The media type without parameters, lower case. */
    public String mediaType() {
        int semicolon = contentType.indexOf(';');
        return (semicolon < 0 ? contentType : contentType.substring(0, semicolon)).trim().toLowerCase(java.util.Locale.ROOT);
    }
}
