package dev.idempotency.jdbc;

import dev.idempotency.testing.Databases;
import dev.idempotency.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the readiness check reads of the database clock: whether the database has told its time since deployment
 * (a node whose database never answered runs on its own clock's time and is not ready), and how long ago.
 */
class DatabaseClockAnswerTest {

    @Test
    void aDatabaseThatNeverAnsweredLeavesTheTimeUnknownAndAnAnswerMakesItKnown() {
        DatabaseClock unanswered = new DatabaseClock(Clock.systemUTC(), TestDatabase.unreachable().dataSource(),
                Dialect.POSTGRESQL, Duration.ofMinutes(1));
        unanswered.refresh();
        assertThat(unanswered.failedMeasurements()).isEqualTo(1);
        assertThat(unanswered.sinceLastAnswer()).isEmpty();

        DatabaseClock answered = new DatabaseClock(Clock.systemUTC(), Databases.named("h2").dataSource(), Dialect.H2,
                Duration.ofMinutes(1));
        assertThat(answered.sinceLastAnswer()).isEmpty();
        answered.refresh();
        assertThat(answered.sinceLastAnswer()).hasValueSatisfying(age ->
                assertThat(age).isBetween(Duration.ZERO, Duration.ofMinutes(1)));
    }
}
