package dev.idempotency.jdbc;

import dev.idempotency.spi.TaskInput;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;

/** The input an accepted asynchronous operation keeps with its claim (docs/adr/0020), written and read by owner. */
final class TaskInputRows {
    private TaskInputRows() {
    }

    static boolean keep(Connection c, RecordSql sql, String scopeKey, String ownerToken, TaskInput input)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.keepTaskInput)) {
            ps.setBytes(1, input.data());
            ps.setString(2, input.encoding());
            ps.setString(3, scopeKey);
            ps.setString(4, ownerToken);
            return ps.executeUpdate() == 1;
        }
    }

    static Optional<TaskInput> find(Connection c, RecordSql sql, String scopeKey, String ownerToken)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.findTaskInput)) {
            ps.setString(1, scopeKey);
            ps.setString(2, ownerToken);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(new TaskInput(rs.getBytes(1), rs.getString(2))) : Optional.empty();
            }
        }
    }
}
