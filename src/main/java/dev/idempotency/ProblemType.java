package dev.idempotency;

/**
 * Every error the library answers with, as an RFC 9457 problem. The {@code type} URI is
 * {@code idempotency.problem-base} (default {@code https://idempotency.dev/problems/}) followed by
 * {@link #slug()}; slugs never change.
 */
public enum ProblemType {
    KEY_MISSING("key-missing", 400, "Idempotency key missing"),
    KEY_INVALID("key-invalid", 400, "Idempotency key invalid"),
    BODY_MALFORMED("body-malformed", 400, "Request body malformed"),
    BODY_TOO_LARGE("body-too-large", 413, "Request body too large"),
    PRINCIPAL_REQUIRED("principal-required", 401, "Authentication required"),
    REQUEST_IN_FLIGHT("request-in-flight", 409, "Request with this key is in progress"),
    FINGERPRINT_MISMATCH("fingerprint-mismatch", 422, "Idempotency key reused with a different request"),
    FINGERPRINT_RULES_UNKNOWN("fingerprint-rules-unknown", 409, "Request fingerprinted under rules not accepted here"),
    TOO_MANY_IN_FLIGHT("too-many-in-flight", 429, "Too many operations in progress"),
    TOO_MANY_KEYS("too-many-keys", 429, "Too many idempotency keys retained"),
    SUPERSEDED("superseded", 409, "Execution superseded by a newer attempt"),
    STORE_UNAVAILABLE("store-unavailable", 503, "Idempotency store unavailable"),
    TASK_NOT_ACCEPTED("task-not-accepted", 503, "Asynchronous task not accepted"),
    ROLLED_BACK("rolled-back", 500, "Operation rolled back"),
    RESPONSE_TOO_LARGE("response-too-large", 500, "Response too large to keep for replay"),
    MESSAGE_FAILED("message-failed", 422, "Message failed finally"),
    DEAD_LETTERED("dead-lettered", 503, "Message failed on its last delivery"),
    OPERATION_FAILED("operation-failed", 422, "Operation failed finally"),
    OPERATION_NOT_FOUND("operation-not-found", 404, "No such operation"),
    ADMIN_FORBIDDEN("admin-forbidden", 403, "Administrator role required"),
    ADMIN_REQUEST_INVALID("admin-request-invalid", 400, "Administrative request invalid"),
    RECORD_NOT_PROCESSING("record-not-processing", 409, "Record is not in progress"),
    RECORD_CHANGED("record-changed", 412, "Record changed since it was read"),
    RECORD_VERSION_REQUIRED("record-version-required", 428, "Record version required"),
    ADMIN_UNSUPPORTED("admin-unsupported", 501, "Not supported by this record store"),
    NOT_CONFIGURED("not-configured", 500, "Idempotency not configured for this call");

    private final String slug;
    private final int defaultStatus;
    private final String title;

    ProblemType(String slug, int defaultStatus, String title) {
        this.slug = slug;
        this.defaultStatus = defaultStatus;
        this.title = title;
    }

    /** The last segment of the {@code type} URI, stable across releases. */
    public String slug() {
        return slug;
    }

    /** The HTTP status used unless configuration chooses another (e.g. 409 for a mismatch). */
    public int defaultStatus() {
        return defaultStatus;
    }

    /** The problem's {@code title}: the same for every occurrence of the type. */
    public String title() {
        return title;
    }
}
