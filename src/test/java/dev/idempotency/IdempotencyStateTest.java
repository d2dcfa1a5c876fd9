package dev.idempotency;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class IdempotencyStateTest {

    @Test
    void theHeaderIsAStructuredFieldItemThatReadsBack() {
        IdempotencyState state = IdempotencyState.of(IdempotencyState.Applied.APPLIED, IdempotencyState.Next.STOP)
                .expiringAt(Instant.ofEpochSecond(1765152000));
        assertThat(state.headerValue()).isEqualTo("applied;next=stop;expires=@1765152000");
        assertThat(IdempotencyState.parse(state.headerValue())).contains(state);
        assertThat(IdempotencyState.parse("not-applied; next=new-key; later=1")).contains(
                IdempotencyState.of(IdempotencyState.Applied.NOT_APPLIED, IdempotencyState.Next.NEW_KEY));
    }

    @Test
    void whatItCannotReadIsNoState() {
        for (String header : new String[]{"", "applied", "done;next=stop", "applied;next=later", "unknown;next=new-key"}) {
            assertThat(IdempotencyState.parse(header)).as(header).isEmpty();
        }
        assertThat(IdempotencyState.parse(null)).isEmpty();
        assertThat(IdempotencyState.parse("in-progress;next=same-key;expires=soon"))
                .as("a malformed expiry is left out").contains(IdempotencyState.of(
                        IdempotencyState.Applied.IN_PROGRESS, IdempotencyState.Next.SAME_KEY));
    }

    @Test
    void aNewKeyIsNeverAdvisedWhereTheWorkMayBeApplied() {
        for (IdempotencyState.Applied applied : new IdempotencyState.Applied[]{IdempotencyState.Applied.APPLIED,
                IdempotencyState.Applied.IN_PROGRESS, IdempotencyState.Applied.UNKNOWN}) {
            assertThatThrownBy(() -> new IdempotencyState(applied, IdempotencyState.Next.NEW_KEY, Optional.empty()))
                    .as(applied.token()).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void everyProblemAboutAnOperationSaysWhatHappened() {
        for (ProblemType type : ProblemType.values()) {
            boolean administrative = type.slug().startsWith("admin-") || type.slug().startsWith("record-");
            assertThat(type.state().isPresent()).as(type.slug()).isEqualTo(!administrative);
        }
        assertThat(Problem.of(ProblemType.STORE_UNAVAILABLE, "x").answerState()).as("the type alone cannot tell")
                .contains(IdempotencyState.of(IdempotencyState.Applied.UNKNOWN, IdempotencyState.Next.SAME_KEY));
    }
}
