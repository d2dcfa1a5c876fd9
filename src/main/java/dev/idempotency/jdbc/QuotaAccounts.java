package dev.idempotency.jdbc;

import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.QuotaCharge;
import dev.idempotency.spi.QuotaExceededException;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Keeps the per-caller quota counters (in flight over all endpoints, stored keys per endpoint) exact under any
 * concurrency without counting a caller's records at each claim: they are charged in the claim's own transaction,
 * given back with the finish and the purge, and reconciled with the records when a caller at a limit may have
 * drifted upward (docs/adr/0005). Every method runs on the store's connection after its record's statement, as
 * every path orders its locks; PostgreSQL's charges and in-flight give-backs ride in the record's own statement
 * ({@link RecordSql}), and only their parameters and answers are handled here.
 */
final class QuotaAccounts {
    // How often a caller at a limit may have its records scanned to make room.
    private static final java.time.Duration RECONCILE_INTERVAL = java.time.Duration.ofSeconds(1);

    private final RecordSql sql;
    private final Dialect dialect;

    QuotaAccounts(RecordSql sql, Dialect dialect) {
        this.sql = sql;
        this.dialect = dialect;
    }

    /** H2 and MariaDB: the claim's charge as statements of their own, in the claim's transaction. */
    void charge(Connection c, IdempotencyRecord record, QuotaCharge charge) throws SQLException {
        boolean inFlight = !charge.inFlight()
                || chargeOne(c, record.tenant(), record.principal(), RecordSql.ALL_ENDPOINTS, charge.maxInFlight());
        boolean key = !charge.key() || !inFlight
                || chargeOne(c, record.tenant(), record.principal(), record.endpoint(), charge.maxKeys());
        refuseOverLimit(charge, inFlight, key);
    }

    // One up unless at the limit; the row is created by the first charge (a concurrent creator wins the
    // primary key, and the update is tried again on its row), on MariaDB before it.
    private boolean chargeOne(Connection c, String tenant, String principal, String row, int limit)
            throws SQLException {
        // In flight, with a limit: less what was given back, read without a lock (one not yet visible only
        // makes the count higher).
        long givenBack = 0;
        if (limit != 0 && RecordSql.ALL_ENDPOINTS.equals(row)) {
            try (PreparedStatement sum = c.prepareStatement(sql.sumReleased)) {
                setAll(sum, tenant, principal);
                try (ResultSet rs = sum.executeQuery()) {
                    rs.next();
                    givenBack = rs.getLong(1);
                }
            }
        }
        boolean rowExists = false;
        if (dialect == Dialect.MARIADB) {
            // Created first where missing (RecordSql.ensureQuota): the update below then finds its row.
            try (PreparedStatement ensure = c.prepareStatement(sql.ensureQuota)) {
                setAll(ensure, tenant, principal, row);
                ensure.executeUpdate();
                rowExists = true;
            }
        }
        try (PreparedStatement update = c.prepareStatement(sql.charge)) {
            setAll(update, tenant, principal, row);
            update.setLong(4, givenBack);
            update.setLong(5, limit == 0 ? Long.MAX_VALUE : limit);
            if (update.executeUpdate() == 1) {
                return true;
            }
            if (rowExists) {
                return false;
            }
            try (PreparedStatement create = c.prepareStatement(sql.createQuota)) {
                setAll(create, tenant, principal, row);
                create.executeUpdate();
                return true;
            } catch (SQLException e) {
                if (dialect.classify(e) != Dialect.Failure.DUPLICATE) {
                    throw e;
                }
            }
            return update.executeUpdate() == 1;
        }
    }

    static void refuseOverLimit(QuotaCharge charge, boolean inFlightCharged, boolean keyCharged) {
        if (charge.inFlight() && !inFlightCharged) {
            throw new QuotaExceededException(QuotaExceededException.Limit.IN_FLIGHT);
        }
        if (charge.key() && !keyCharged) {
            throw new QuotaExceededException(QuotaExceededException.Limit.KEYS);
        }
    }

    // The parameters of RecordSql's withCharges after the change's; answers the next index.
    static int setCharge(PreparedStatement ps, int start, QuotaCharge charge) throws SQLException {
        int i = start;
        ps.setBoolean(i++, charge.inFlight());
        ps.setInt(i++, charge.maxInFlight() == 0 ? Integer.MAX_VALUE : charge.maxInFlight());
        ps.setBoolean(i++, charge.key());
        ps.setInt(i++, charge.maxKeys() == 0 ? Integer.MAX_VALUE : charge.maxKeys());
        return i;
    }

    // The caller's counter row of the endpoint, locked until commit (the key charge may have done so already);
    // created at zero when no charge ever made it. Taken after the record, as every path takes them.
    void lockCaller(Connection c, IdempotencyRecord record) throws SQLException {
        if (dialect == Dialect.MARIADB) {
            try (PreparedStatement ensure = c.prepareStatement(sql.ensureQuota)) {
                setAll(ensure, record.tenant(), record.principal(), record.endpoint());
                ensure.executeUpdate();
                return;
            }
        }
        try (PreparedStatement touch = c.prepareStatement(sql.lockCounter)) {
            setAll(touch, record.tenant(), record.principal(), record.endpoint());
            if (touch.executeUpdate() == 1) {
                return;
            }
            try (PreparedStatement create = c.prepareStatement(sql.createCounter)) {
                setAll(create, record.tenant(), record.principal(), record.endpoint());
                create.executeUpdate();
            } catch (SQLException e) {
                if (dialect.classify(e) != Dialect.Failure.DUPLICATE) {
                    throw e;
                }
                touch.executeUpdate();
            }
        }
    }

    // H2 and MariaDB: the finished record's give-back, in the finish's transaction. MariaDB's is one upsert; H2
    // updates, creates the row when it was missing, and updates again when a concurrent finish created it.
    void giveBackInFlight(Connection c, String scopeKey) throws SQLException {
        int stripe = RecordSql.stripe(scopeKey);
        try (PreparedStatement update = c.prepareStatement(sql.giveBackInFlight)) {
            update.setInt(1, stripe);
            update.setString(2, scopeKey);
            if (dialect == Dialect.MARIADB) {
                update.executeUpdate();
                return;
            }
            update.setString(3, scopeKey);
            if (update.executeUpdate() == 1) {
                return;
            }
            try (PreparedStatement create = c.prepareStatement(sql.giveBackInFlightCreate)) {
                create.setInt(1, stripe);
                create.setString(2, scopeKey);
                create.executeUpdate();
                return;
            } catch (SQLException e) {
                if (dialect.classify(e) != Dialect.Failure.DUPLICATE) {
                    throw e;
                }
            }
            update.executeUpdate();
        }
    }

    // The purged records' give-back to their callers' counts of stored keys: records deleted per (tenant,
    // principal, endpoint), after the records, as every path orders its locks.
    void giveBackKeys(Connection c, Map<List<String>, Integer> freed) throws SQLException {
        if (freed.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(sql.giveBackKeys)) {
            for (Map.Entry<List<String>, Integer> e : freed.entrySet()) {
                ps.setInt(1, e.getValue());
                ps.setInt(2, e.getValue());
                setAll(ps, 3, e.getKey().get(0), e.getKey().get(1), e.getKey().get(2));
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** The counter of a caller at {@code limit} set to its records; whether that made room (RecordStore#reconcile). */
    boolean reconcile(Connection c, QuotaExceededException.Limit limit, String tenant, String principal,
                      String endpoint, Instant now) throws SQLException {
        String row = limit == QuotaExceededException.Limit.IN_FLIGHT ? RecordSql.ALL_ENDPOINTS : endpoint;
        // A plain read first: a caller that was checked a moment ago is refused without another scan.
        try (PreparedStatement ps = c.prepareStatement(sql.readQuota)) {
            setAll(ps, tenant, principal, row);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return false;
                }
                Instant checked = RecordRows.instant(rs, "checked_at");
                if (checked != null && checked.isAfter(now.minus(RECONCILE_INTERVAL))) {
                    return false;
                }
            }
        }
        // Records before the quota row, as every other path locks them, so that no two transactions wait
        // on each other.
        if (limit == QuotaExceededException.Limit.IN_FLIGHT) {
            try (PreparedStatement ps = c.prepareStatement(sql.releaseExpiredClaims)) {
                RecordRows.setInstant(ps, 1, now);
                ps.setString(2, tenant);
                ps.setString(3, principal);
                RecordRows.setInstant(ps, 4, now);
                ps.executeUpdate();
            }
        } else {
            try (PreparedStatement ps = c.prepareStatement(sql.deleteExpiredOfCaller)) {
                setAll(ps, tenant, principal, endpoint);
                RecordRows.setInstant(ps, 4, now);
                ps.executeUpdate();
            }
        }
        long charged;
        try (PreparedStatement ps = c.prepareStatement(sql.lockQuota)) {
            setAll(ps, tenant, principal, row);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return false;
                }
                charged = rs.getLong(1);
            }
        }
        // Counted after the lock, in a statement of its own: it sees every change committed before the
        // lock was granted, and every later one changes the row relative to this count. In flight: the
        // charges become the records running plus what was given back, read in the same snapshot.
        long counted;
        long givenBack = 0;
        boolean inFlight = limit == QuotaExceededException.Limit.IN_FLIGHT;
        try (PreparedStatement ps = c.prepareStatement(inFlight ? sql.countInFlightAndReleased : sql.countKeys)) {
            setAll(ps, tenant, principal, inFlight ? tenant : endpoint);
            if (inFlight) {
                ps.setString(4, principal);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                counted = rs.getLong(1);
                if (inFlight) {
                    givenBack = rs.getLong(2);
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement(sql.setQuota)) {
            ps.setLong(1, counted + givenBack);
            RecordRows.setInstant(ps, 2, now);
            setAll(ps, 3, tenant, principal, row);
            ps.executeUpdate();
        }
        return counted < charged - givenBack;
    }

    private static void setAll(PreparedStatement ps, String... values) throws SQLException {
        setAll(ps, 1, values);
    }

    private static void setAll(PreparedStatement ps, int start, String... values) throws SQLException {
        for (int i = 0; i < values.length; i++) {
            ps.setString(start + i, values[i]);
        }
    }
}
