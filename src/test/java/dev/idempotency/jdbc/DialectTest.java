package dev.idempotency.jdbc;

import org.junit.jupiter.api.Test;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

import static dev.idempotency.jdbc.Dialect.Failure.CONTENTION;
import static dev.idempotency.jdbc.Dialect.Failure.DUPLICATE;
import static dev.idempotency.jdbc.Dialect.Failure.MISCONFIGURED;
import static dev.idempotency.jdbc.Dialect.Failure.UNAVAILABLE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The SQLStates and vendor codes each database answers with, as its documentation gives them. */
class DialectTest {

    @Test
    void postgresql() {
        assertThat(Dialect.POSTGRESQL.classify(error("23505", 0))).isEqualTo(DUPLICATE);
        assertThat(Dialect.POSTGRESQL.classify(error("40001", 0))).isEqualTo(CONTENTION);
        assertThat(Dialect.POSTGRESQL.classify(error("40P01", 0))).isEqualTo(CONTENTION);
        assertThat(Dialect.POSTGRESQL.classify(error("55P03", 0))).isEqualTo(CONTENTION);
        assertThat(Dialect.POSTGRESQL.classify(error("57P01", 0))).isEqualTo(UNAVAILABLE);
        assertThat(Dialect.POSTGRESQL.classify(error("08006", 0))).isEqualTo(UNAVAILABLE);
        assertThat(Dialect.POSTGRESQL.classify(error("42P01", 0))).isEqualTo(MISCONFIGURED);
        assertThat(Dialect.POSTGRESQL.classify(error("23502", 0))).as("not null is no duplicate").isEqualTo(UNAVAILABLE);
    }

    @Test
    void mariadbTellsDuplicatesByVendorCode() {
        assertThat(Dialect.MARIADB.classify(error("23000", 1062))).isEqualTo(DUPLICATE);
        assertThat(Dialect.MARIADB.classify(error("23000", 1048))).as("column cannot be null").isNotEqualTo(DUPLICATE);
        assertThat(Dialect.MARIADB.classify(error("40001", 1213))).isEqualTo(CONTENTION);
        assertThat(Dialect.MARIADB.classify(error("HY000", 1205))).isEqualTo(CONTENTION);
        assertThat(Dialect.MARIADB.classify(error("HY000", 1020))).isEqualTo(CONTENTION);
        assertThat(Dialect.MARIADB.classify(error("70100", 1927))).isEqualTo(UNAVAILABLE);
        assertThat(Dialect.MARIADB.classify(error("42S02", 1146))).isEqualTo(MISCONFIGURED);
    }

    @Test
    void h2() {
        assertThat(Dialect.H2.classify(error("23505", 23505))).isEqualTo(DUPLICATE);
        assertThat(Dialect.H2.classify(error("90131", 90131))).isEqualTo(CONTENTION);
        assertThat(Dialect.H2.classify(error("HYT00", 50200))).isEqualTo(CONTENTION);
        assertThat(Dialect.H2.classify(error("42S02", 42102))).isEqualTo(MISCONFIGURED);
    }

    @Test
    void aWrappedOrChainedCauseIsFound() {
        SQLException outer = new SQLException("batch failed", "HY000", 0);
        outer.setNextException(error("23505", 0));
        assertThat(Dialect.POSTGRESQL.classify(outer)).isEqualTo(DUPLICATE);
        assertThat(Dialect.POSTGRESQL.classify(new SQLException("wrapped", null, 0, error("40P01", 0)))).isEqualTo(CONTENTION);
        assertThat(Dialect.POSTGRESQL.classify(new SQLTransientConnectionException("pool exhausted"))).isEqualTo(UNAVAILABLE);
    }

    @Test
    void theDatabaseIsRecognisedByProductName() {
        assertThat(Dialect.of("PostgreSQL")).isEqualTo(Dialect.POSTGRESQL);
        assertThat(Dialect.of("MariaDB")).isEqualTo(Dialect.MARIADB);
        assertThat(Dialect.of("MySQL")).isEqualTo(Dialect.MARIADB);
        assertThat(Dialect.of("H2")).isEqualTo(Dialect.H2);
        assertThatThrownBy(() -> Dialect.of("Oracle")).hasMessageContaining("IDEM-S002");
    }

    private static SQLException error(String state, int code) {
        return new SQLException("x", state, code);
    }
}
