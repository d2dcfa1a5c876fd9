package dev.idempotency.core;

import dev.idempotency.IdempotencyState;
import dev.idempotency.IdempotencyState.Applied;
import dev.idempotency.IdempotencyState.Next;
import dev.idempotency.RecordStatus;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The one place that says what an answer means for its operation ({@link IdempotencyState}, docs/adr/0019): from the
 * record a replay or the status resource reads, or from how the run that answers ended — never from the answer's
 * status code alone. Problems the protocol raises carry their state from where they are raised
 * ({@link dev.idempotency.ProblemType#state()} where the type alone tells).
 */
public final class AnswerStates {
    /** A committed outcome: the answer (or its replay) is the outcome; the same key replays it. */
    public static final IdempotencyState APPLIED = IdempotencyState.of(Applied.APPLIED, Next.STOP);
    /** An execution runs: ask again with the same key. */
    public static final IdempotencyState IN_PROGRESS = IdempotencyState.of(Applied.IN_PROGRESS, Next.SAME_KEY);
    /** Nobody can tell yet whether the work committed: only the same key is safe. */
    public static final IdempotencyState UNKNOWN = IdempotencyState.of(Applied.UNKNOWN, Next.SAME_KEY);
    /** Nothing was applied, and a retry with the same key runs the operation again. */
    public static final IdempotencyState NOT_APPLIED_SAME_KEY = IdempotencyState.of(Applied.NOT_APPLIED, Next.SAME_KEY);
    /** A final failure whose work rolled back: the same key replays it. */
    public static final IdempotencyState NOT_APPLIED_FINAL = IdempotencyState.of(Applied.NOT_APPLIED, Next.STOP);

    /**
     * A final failure's stored outcome keeps this header with whether its work committed (a 4xx the method returned
     * commits with its transaction; a thrown one is recorded after the rollback): the record's status alone cannot
     * tell its replays. Only final failures carry it; a success is always applied.
     */
    static final String STORED_MARKER = IdempotencyState.HEADER;

    private AnswerStates() {
    }

    /**
     * What a record says to a replay, a duplicate or the status resource: PROCESSING in progress; SUCCEEDED applied;
     * FAILED_FINAL applied or not as its outcome was stored (unknown for one stored before this was kept);
     * FAILED_RETRYABLE not applied (unknown where an earlier attempt may have acted downstream) and the same key
     * runs it again. A finished record's state carries its expiry.
     */
    public static IdempotencyState ofRecord(IdempotencyRecord record, boolean externalSideEffects) {
        return switch (record.status()) {
            case PROCESSING -> IN_PROGRESS;
            case SUCCEEDED -> APPLIED.expiringAt(record.expiresAt());
            case FAILED_FINAL -> IdempotencyState.of(storedMarker(record).orElse(Applied.UNKNOWN), Next.STOP)
                    .expiringAt(record.expiresAt());
            case FAILED_RETRYABLE -> (externalSideEffects ? UNKNOWN : NOT_APPLIED_SAME_KEY).expiringAt(record.expiresAt());
        };
    }

    /**
     * Nothing of this run committed (rolled back, given back, never finished). A new key is safe only with proof that
     * nothing of this operation acted anywhere: the first attempt of its key (a claim that rolls back with the
     * business transaction leaves no count of earlier attempts, so it never qualifies), no downstream key derived and
     * the key not handed to the application during it, and an endpoint that declares no external side effects.
     */
    public static IdempotencyState notApplied(Claim claim, boolean keyHandedOut) {
        boolean provenUntouched = claim.attempt() == 1 && !claim.inTransaction() && !keyHandedOut
                && !claim.operation().policy().externalSideEffects();
        return provenUntouched ? IdempotencyState.of(Applied.NOT_APPLIED, Next.NEW_KEY) : NOT_APPLIED_SAME_KEY;
    }

    /** A run's failure as recorded: final (replayed, its work rolled back) or retryable ({@link #notApplied}). */
    public static IdempotencyState failed(Claim claim, boolean finalFailure, boolean keyHandedOut) {
        return finalFailure ? NOT_APPLIED_FINAL : notApplied(claim, keyHandedOut);
    }

    /** {@code stored} as a final failure's outcome is kept, marked with whether its work committed. */
    static StoredResponse marked(StoredResponse stored, RecordStatus status, boolean committed) {
        if (status != RecordStatus.FAILED_FINAL) {
            return stored;
        }
        Map<String, List<String>> headers = new LinkedHashMap<>(stored.headers());
        headers.put(STORED_MARKER, List.of((committed ? Applied.APPLIED : Applied.NOT_APPLIED).token()));
        return new StoredResponse(stored.status(), headers, stored.body(), stored.bodyEncoding());
    }

    private static Optional<Applied> storedMarker(IdempotencyRecord record) {
        return record.response().map(r -> r.header(STORED_MARKER))
                .flatMap(marker -> IdempotencyState.parse(marker + ";next=stop")).map(IdempotencyState::state);
    }
}
