package dev.idempotency;

import dev.idempotency.IdempotencyState.Applied;
import dev.idempotency.IdempotencyState.Next;

import java.util.Optional;

import static dev.idempotency.IdempotencyState.Applied.IN_PROGRESS;
import static dev.idempotency.IdempotencyState.Applied.NOT_APPLIED;
import static dev.idempotency.IdempotencyState.Applied.UNKNOWN;
import static dev.idempotency.IdempotencyState.Next.NEW_KEY;
import static dev.idempotency.IdempotencyState.Next.SAME_KEY;
import static dev.idempotency.IdempotencyState.Next.STOP;

/**
 * Every error the library answers with, as an RFC 9457 problem. The {@code type} URI is
 * {@code idempotency.problem-base} (default {@code https://idempotency.dev/problems/}) followed by
 * {@link #slug()}; slugs never change.
 */
public enum ProblemType {
    KEY_MISSING("key-missing", 400, "Idempotency key missing", NOT_APPLIED, STOP),
    KEY_INVALID("key-invalid", 400, "Idempotency key invalid", NOT_APPLIED, STOP),
    BODY_MALFORMED("body-malformed", 400, "Request body malformed", NOT_APPLIED, STOP),
    BODY_TOO_LARGE("body-too-large", 413, "Request body too large", NOT_APPLIED, STOP),
    PRINCIPAL_REQUIRED("principal-required", 401, "Authentication required", NOT_APPLIED, STOP),
    REQUEST_IN_FLIGHT("request-in-flight", 409, "Request with this key is in progress", IN_PROGRESS, SAME_KEY),
    FINGERPRINT_MISMATCH("fingerprint-mismatch", 422, "Idempotency key reused with a different request", NOT_APPLIED, NEW_KEY),
    FINGERPRINT_RULES_UNKNOWN("fingerprint-rules-unknown", 409, "Request fingerprinted under rules not accepted here", UNKNOWN, SAME_KEY),
    TOO_MANY_IN_FLIGHT("too-many-in-flight", 429, "Too many operations in progress", NOT_APPLIED, SAME_KEY),
    TOO_MANY_KEYS("too-many-keys", 429, "Too many idempotency keys retained", NOT_APPLIED, SAME_KEY),
    SUPERSEDED("superseded", 409, "Execution superseded by a newer attempt", IN_PROGRESS, SAME_KEY),
    STORE_UNAVAILABLE("store-unavailable", 503, "Idempotency store unavailable", UNKNOWN, SAME_KEY),
    TASK_NOT_ACCEPTED("task-not-accepted", 503, "Asynchronous task not accepted", NOT_APPLIED, SAME_KEY),
    ROLLED_BACK("rolled-back", 500, "Operation rolled back", NOT_APPLIED, SAME_KEY),
    RESPONSE_TOO_LARGE("response-too-large", 500, "Response too large to keep for replay", NOT_APPLIED, SAME_KEY),
    MESSAGE_FAILED("message-failed", 422, "Message failed finally", NOT_APPLIED, STOP),
    DEAD_LETTERED("dead-lettered", 503, "Message failed on its last delivery", NOT_APPLIED, SAME_KEY),
    OPERATION_FAILED("operation-failed", 422, "Operation failed finally", NOT_APPLIED, STOP),
    OPERATION_NOT_FOUND("operation-not-found", 404, "No such operation", UNKNOWN, SAME_KEY),
    ADMIN_FORBIDDEN("admin-forbidden", 403, "Administrator role required", null, null),
    ADMIN_REQUEST_INVALID("admin-request-invalid", 400, "Administrative request invalid", null, null),
    RECORD_NOT_PROCESSING("record-not-processing", 409, "Record is not in progress", null, null),
    RECORD_CHANGED("record-changed", 412, "Record changed since it was read", null, null),
    RECORD_VERSION_REQUIRED("record-version-required", 428, "Record version required", null, null),
    ADMIN_UNSUPPORTED("admin-unsupported", 501, "Not supported by this record store", null, null),
    NOT_CONFIGURED("not-configured", 500, "Idempotency not configured for this call", NOT_APPLIED, STOP);

    private final String slug;
    private final int defaultStatus;
    private final String title;
    private final Optional<IdempotencyState> state;

    ProblemType(String slug, int defaultStatus, String title, Applied applied, Next next) {
        this.slug = slug;
        this.defaultStatus = defaultStatus;
        this.title = title;
        this.state = applied == null ? Optional.empty() : Optional.of(IdempotencyState.of(applied, next));
    }

    /** The last segment of the {@code type} URI, stable across releases. */
    public String slug() {
        return slug;
    }

    /** The HTTP status used unless configuration chooses another (e.g. 409 for a mismatch). */
    public int defaultStatus() {
        return defaultStatus;
    }

    /**
     * What an answer of this type says about its operation unless the place that raised it knows more (docs/adr/0019):
     * the least it can always claim — {@code unknown} where the type alone cannot tell whether anything committed.
     * Empty for the administrative resource's problems, which are no answer about an operation.
     */
    public Optional<IdempotencyState> state() {
        return state;
    }

    /** The problem's {@code title}: the same for every occurrence of the type. */
    public String title() {
        return title;
    }
}
