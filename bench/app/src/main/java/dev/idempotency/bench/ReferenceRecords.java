package dev.idempotency.bench;

import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;

/**
 * The hand-written reference's record table, {@code bench_ref_record} (bench/schema.sql), in plain JDBC on
 * the library's DataSource: the fewest statements the protocol needs. No secondary index, so the finish
 * can be a HOT update. Each method runs in whatever JTA transaction the caller has (or none).
 */
@ApplicationScoped
public class ReferenceRecords {
    static final String CLAIM = "INSERT INTO bench_ref_record (scope_key, owner_token, status, request_hash)"
            + " VALUES (?, ?, 'PROCESSING', ?)";
    static final String FINISH = "UPDATE bench_ref_record SET status = 'SUCCEEDED', response_status = ?, location = ?,"
            + " response_body = ? WHERE scope_key = ? AND owner_token = ? AND status = 'PROCESSING'";
    static final String FIND = "SELECT status, request_hash, response_status, location, response_body"
            + " FROM bench_ref_record WHERE scope_key = ?";
    static final String RELEASE = "DELETE FROM bench_ref_record WHERE scope_key = ? AND owner_token = ?"
            + " AND status = 'PROCESSING'";
    private static final String UNIQUE_VIOLATION = "23505";

    @Resource(lookup = "java:/jdbc/PaymentsDS")
    DataSource dataSource;

    /** A record as read back. */
    public record Stored(String status, String requestHash, int responseStatus, String location, byte[] body) {
    }

    /** INSERTs a PROCESSING record; false when the key exists (the transaction must then roll back). */
    public boolean claim(String scopeKey, String owner, String requestHash) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(CLAIM)) {
            ps.setString(1, scopeKey);
            ps.setString(2, owner);
            ps.setString(3, requestHash);
            ps.executeUpdate();
            return true;
        } catch (SQLException e) {
            if (UNIQUE_VIOLATION.equals(e.getSQLState())) {
                return false;
            }
            throw e;
        }
    }

    /** The fenced finish: false when this owner no longer holds the record. */
    public boolean finish(String scopeKey, String owner, int status, String location, byte[] body) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(FINISH)) {
            ps.setInt(1, status);
            ps.setString(2, location);
            ps.setBytes(3, body);
            ps.setString(4, scopeKey);
            ps.setString(5, owner);
            return ps.executeUpdate() == 1;
        }
    }

    /** One SELECT by primary key. */
    public Optional<Stored> find(String scopeKey) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(FIND)) {
            ps.setString(1, scopeKey);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                return Optional.of(new Stored(rs.getString(1), rs.getString(2), rs.getInt(3), rs.getString(4),
                        rs.getBytes(5)));
            }
        }
    }

    /** Gives a claim back after a failed execution, so that a retry runs again. */
    public void release(String scopeKey, String owner) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(RELEASE)) {
            ps.setString(1, scopeKey);
            ps.setString(2, owner);
            ps.executeUpdate();
        }
    }
}
