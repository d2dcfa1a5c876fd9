package dev.idempotency.jdbc;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the store warns about at start-up on a PostgreSQL primary: the settings under which a failover can lose an
 * acknowledged outcome (scenarios 19c and 19d of docs/reliability.md show both losses).
 */
class PostgresReplicationTest {

    @Test
    void aServerWithoutStandbysAndWithoutTimeoutsRisksNothing() {
        assertThat(new PostgresReplication(0, "", "on", 0, 0).risks()).isEmpty();
    }

    @Test
    void standbysStreamingAsynchronouslyAreARisk() {
        assertThat(new PostgresReplication(1, "", "on", 0, 0).risks())
                .singleElement().asString().startsWith("IDEM-W022").contains("synchronous_standby_names");
        // Named, but the commit does not wait for them.
        assertThat(new PostgresReplication(2, "*", "local", 0, 0).risks())
                .singleElement().asString().startsWith("IDEM-W022").contains("synchronous_commit=local");
    }

    @Test
    void aSynchronousStandbyWithoutTimeoutsRisksNothing() {
        assertThat(new PostgresReplication(1, "*", "on", 0, 0).risks()).isEmpty();
        assertThat(new PostgresReplication(1, "ANY 1 (s1, s2)", "remote_apply", 0, 0).risks()).isEmpty();
    }

    @Test
    void aTimeoutThatCanCancelACommitsWaitForTheSynchronousStandbyIsARisk() {
        assertThat(new PostgresReplication(1, "*", "on", 0, 5).risks())
                .singleElement().asString().startsWith("IDEM-W023").contains("queryTimeout").contains("5 s");
        assertThat(new PostgresReplication(1, "*", "on", 1500, 0).risks())
                .singleElement().asString().startsWith("IDEM-W023").contains("statement_timeout=1500 ms");
        // Without synchronous replication a cancelled wait loses nothing the asynchronous standby would not.
        assertThat(new PostgresReplication(0, "", "on", 1500, 5).risks()).isEmpty();
    }

    @Test
    void theSettingsAreReadFromTheSessionOfARealServer() throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/test?queryTimeout=7"
                + "&options=-c%20statement_timeout%3D1500", "postgres", "")) {
            PostgresReplication replication = PostgresReplication.of(c).orElseThrow();
            assertThat(replication.walSenders()).isZero();
            assertThat(replication.standbyNames()).isEmpty();
            assertThat(replication.synchronousCommit()).isEqualTo("on");
            assertThat(replication.statementTimeoutMillis()).isEqualTo(1500);
            assertThat(replication.queryTimeoutSeconds()).isEqualTo(7);
        }
    }

    @Test
    void theDriversQueryTimeoutIsReadFromItsUrl() {
        assertThat(PostgresReplication.queryTimeout("jdbc:postgresql://h1:5432,h2:5432/db?targetServerType=primary"
                + "&queryTimeout=30")).isEqualTo(30);
        assertThat(PostgresReplication.queryTimeout("jdbc:postgresql://h1/db?queryTimeout=5&ssl=true")).isEqualTo(5);
        assertThat(PostgresReplication.queryTimeout("jdbc:postgresql://h1/db?socketTimeout=30")).isZero();
        assertThat(PostgresReplication.queryTimeout(null)).isZero();
    }

    @Test
    void aDatabaseThatIsNotPostgreSqlHasNoSuchSettings() throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:h2:mem:replication", "sa", "")) {
            assertThat(PostgresReplication.of(c)).isEmpty();
        }
    }
}
