package dev.idempotency.core;

import dev.idempotency.RecordStatus;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** What a record says to a replay and the status resource, where the JAX-RS tests do not reach it. */
class AnswerStatesTest {
    private static final Instant EXPIRES = Instant.parse("2026-12-08T10:00:00Z");

    @Test
    void aFinalFailureSaysWhatItsStoredMarkSaysAndUnknownWithoutOne() {
        StoredResponse declined = new StoredResponse(402, Map.of(), new byte[0], StoredResponse.PLAIN);
        assertThat(AnswerStates.ofRecord(record(RecordStatus.FAILED_FINAL,
                AnswerStates.marked(declined, RecordStatus.FAILED_FINAL, true)), false).headerValue())
                .isEqualTo("applied;next=stop;expires=@" + EXPIRES.getEpochSecond());
        assertThat(AnswerStates.ofRecord(record(RecordStatus.FAILED_FINAL,
                AnswerStates.marked(declined, RecordStatus.FAILED_FINAL, false)), false).headerValue())
                .startsWith("not-applied;next=stop;");
        assertThat(AnswerStates.ofRecord(record(RecordStatus.FAILED_FINAL, declined), false).headerValue())
                .as("stored before the mark was kept").startsWith("unknown;next=stop;");
        StoredResponse created = new StoredResponse(201, Map.of("Location", List.of("/p/1")), new byte[0],
                StoredResponse.PLAIN);
        assertThat(AnswerStates.marked(created, RecordStatus.SUCCEEDED, true)).as("a success carries no mark")
                .isEqualTo(created);
    }

    @Test
    void aRetryableRecordIsUnknownWhereAnEarlierAttemptMayHaveActedDownstream() {
        IdempotencyRecord released = record(RecordStatus.FAILED_RETRYABLE, null);
        assertThat(AnswerStates.ofRecord(released, false).headerValue()).startsWith("not-applied;next=same-key;");
        assertThat(AnswerStates.ofRecord(released, true).headerValue()).startsWith("unknown;next=same-key;");
        assertThat(AnswerStates.ofRecord(record(RecordStatus.PROCESSING, null), false).headerValue())
                .as("a running operation's record expires later than it says now").isEqualTo("in-progress;next=same-key");
    }

    private static IdempotencyRecord record(RecordStatus status, StoredResponse response) {
        Instant now = EXPIRES.minusSeconds(3600);
        return new IdempotencyRecord("scope", "", "alice", "payments.create", "v1:hash", status, Optional.empty(),
                Optional.ofNullable(response), "token", Optional.empty(), 1, now, now, EXPIRES);
    }
}
