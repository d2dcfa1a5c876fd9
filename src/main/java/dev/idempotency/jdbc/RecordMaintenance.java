package dev.idempotency.jdbc;

import dev.idempotency.RecordStatus;
import dev.idempotency.spi.IdempotencyRecord;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The statements that look after the record table as a whole rather than one operation: the settler's scan for
 * stuck operations, the administrator's listing, and the retention's batched purge.
 */
final class RecordMaintenance {
    private final RecordSql sql;
    private final QuotaAccounts quota;

    RecordMaintenance(RecordSql sql, QuotaAccounts quota) {
        this.sql = sql;
        this.quota = quota;
    }

    /** PROCESSING records whose expiry lies between the bounds, after {@code afterScopeKey}, at most {@code limit}. */
    List<IdempotencyRecord> findProcessing(Connection c, Instant expiresFrom, String afterScopeKey,
                                           Instant expiresBefore, int limit) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.findProcessing)) {
            RecordRows.setInstant(ps, 1, expiresBefore);
            RecordRows.setInstant(ps, 2, expiresFrom);
            RecordRows.setInstant(ps, 3, expiresFrom);
            ps.setString(4, afterScopeKey);
            ps.setInt(5, limit);
            return readAll(ps);
        }
    }

    /** An endpoint's records in {@code statuses} (not empty) created before {@code createdBefore}, unexpired. */
    List<IdempotencyRecord> list(Connection c, String endpoint, Set<RecordStatus> statuses, Instant createdBefore,
                                 Instant now, int limit) throws SQLException {
        // The statement names four statuses: fewer repeat the first.
        List<RecordStatus> four = new ArrayList<>(statuses);
        while (four.size() < 4) {
            four.add(four.get(0));
        }
        try (PreparedStatement ps = c.prepareStatement(sql.listForAdministrator)) {
            ps.setString(1, endpoint);
            for (int i = 0; i < 4; i++) {
                ps.setString(2 + i, four.get(i).name());
            }
            RecordRows.setInstant(ps, 6, createdBefore);
            RecordRows.setInstant(ps, 7, now);
            ps.setInt(8, limit);
            return readAll(ps);
        }
    }

    /**
     * Deletes at most {@code batchSize} expired records. Select the keys, then delete by primary key with the
     * conditions checked again: no range delete, so MariaDB takes no gap locks that would block concurrent claims. Each
     * deleted record is given back to its caller's count of stored records, after the records, as every path orders
     * its locks.
     */
    int purgeExpired(Connection c, Instant now, int batchSize) throws SQLException {
        List<String[]> found = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql.expiredKeys)) {
            RecordRows.setInstant(ps, 1, now);
            ps.setInt(2, batchSize);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    found.add(new String[] {rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4)});
                }
            }
        }
        if (found.isEmpty()) {
            return 0;
        }
        Map<List<String>, Integer> freed = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement(sql.deleteExpired)) {
            for (String[] key : found) {
                ps.setString(1, key[0]);
                RecordRows.setInstant(ps, 2, now);
                ps.addBatch();
            }
            int[] results = ps.executeBatch();
            for (int k = 0; k < results.length; k++) {
                int n = results[k] == Statement.SUCCESS_NO_INFO ? 1 : results[k];
                if (n > 0) {
                    freed.merge(List.of(found.get(k)[1], found.get(k)[2], found.get(k)[3]), n, Integer::sum);
                }
            }
        }
        quota.giveBackKeys(c, freed);
        return freed.values().stream().mapToInt(Integer::intValue).sum();
    }

    private static List<IdempotencyRecord> readAll(PreparedStatement ps) throws SQLException {
        List<IdempotencyRecord> found = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                found.add(RecordRows.read(rs));
            }
        }
        return found;
    }
}
