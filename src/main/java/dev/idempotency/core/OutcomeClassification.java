package dev.idempotency.core;

import dev.idempotency.RecordStatus;

import java.util.Optional;

/**
 * The one place that decides whether an execution's outcome is final (recorded and replayed to every retry) or
 * retryable (given back, so that the retry runs again), for every trigger: by the status its answer has — a 2xx or
 * 3xx is a success, a 4xx a final failure, a 5xx retryable — and, for a thrown failure, first by the endpoint's
 * configured types.
 */
public final class OutcomeClassification {
    private OutcomeClassification() {
    }

    /** The record an answer of {@code status} leaves when its work is not forced to commit: 2xx/3xx, 4xx, 5xx. */
    public static RecordStatus ofStatus(int status) {
        return isSuccess(status) ? RecordStatus.SUCCEEDED
                : status < 500 ? RecordStatus.FAILED_FINAL : RecordStatus.FAILED_RETRYABLE;
    }

    /**
     * The record an answer of {@code status} leaves when its work commits whatever it says (an exception the
     * application declared not to roll back): a committed outcome is never retried, so any failure is final.
     */
    public static RecordStatus ofCommitted(int status) {
        return isSuccess(status) ? RecordStatus.SUCCEEDED : RecordStatus.FAILED_FINAL;
    }

    /** Whether an answer of {@code status} says the operation was done. */
    public static boolean isSuccess(int status) {
        return status < 400;
    }

    /** How a thrown failure counts for the record: by its type, or by the status the trigger renders it with. */
    public enum FailureKind {
        /** A configured retryOn type, or a failure of the library's own finish: the retry runs again. */
        RETRYABLE,
        /** A configured finalOn type or a Bean Validation failure: recorded and replayed. */
        FINAL,
        /** Neither: its rendered status decides ({@link #ofStatus}). */
        BY_STATUS;

        /**
         * How a failure counts: the endpoint's configured types first; then a Bean Validation failure is final (the
         * same request fails the same way, whatever status the runtime maps it to); otherwise its status decides.
         */
        public static FailureKind of(EndpointPolicy policy, Throwable thrown) {
            Optional<Boolean> configured = policy.isRetryable(thrown);
            if (configured.isPresent()) {
                return configured.get() ? RETRYABLE : FINAL;
            }
            for (Class<?> type = thrown.getClass(); type != null; type = type.getSuperclass()) {
                if (type.getName().equals("jakarta.validation.ValidationException")) {
                    return FINAL;
                }
            }
            return BY_STATUS;
        }

        /** Whether a failure of this kind, rendered with {@code status}, leaves the operation retryable. */
        public boolean retryable(int status) {
            return switch (this) {
                case RETRYABLE -> true;
                case FINAL -> false;
                case BY_STATUS -> ofStatus(status) != RecordStatus.FAILED_FINAL;
            };
        }
    }
}
