package dev.idempotency.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a PostgreSQL primary replicates what the store commits, as a session of the DataSource finds it at start-up, and
 * what in it can lose an acknowledged outcome in a failover (docs/adr/0016):
 * <ul>
 * <li>standbys that stream asynchronously: a commit is acknowledged before any standby has it;</li>
 * <li>with a synchronous standby, a cancel of a COMMIT's wait for it: PostgreSQL then ends the wait with a WARNING
 * only ("committed locally, but might not have been replicated") and the client sees a successful commit. pgjdbc's
 * {@code queryTimeout} property sends such a cancel from an XA commit (its one-phase COMMIT too, since 42.7.13), and
 * {@code statement_timeout} ends the wait of a {@code COMMIT PREPARED} (a transaction with a second XA resource). Not
 * the server's transaction timeout (Narayana's reaper leaves a committing transaction alone), nor WildFly's
 * {@code query-timeout} (it applies to the application's statements, not to the commit).</li>
 * </ul>
 *
 * @param walSenders        standbys streaming from this server now ({@code pg_stat_replication})
 * @param standbyNames      {@code synchronous_standby_names}
 * @param synchronousCommit {@code synchronous_commit}
 * @param statementTimeoutMillis {@code statement_timeout} of the session, 0 for none
 * @param queryTimeoutSeconds pgjdbc's {@code queryTimeout} connection property, as the connection's URL names it; 0
 *                          for none
 */
record PostgresReplication(int walSenders, String standbyNames, String synchronousCommit, long statementTimeoutMillis,
                           int queryTimeoutSeconds) {
    private static final Pattern QUERY_TIMEOUT = Pattern.compile("[?&]queryTimeout=(\\d+)");

    /** The session's settings; empty when it cannot read them (not PostgreSQL, or a standby of its own). */
    static Optional<PostgresReplication> of(Connection c) {
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT (SELECT COUNT(*) FROM pg_stat_replication),"
                     + " current_setting('synchronous_standby_names'), current_setting('synchronous_commit'),"
                     + " (SELECT setting::bigint FROM pg_settings WHERE name = 'statement_timeout')")) {
            if (!rs.next()) {
                return Optional.empty();
            }
            return Optional.of(new PostgresReplication(rs.getInt(1), rs.getString(2), rs.getString(3), rs.getLong(4),
                    queryTimeout(c.getMetaData().getURL())));
        } catch (SQLException unreadable) {
            return Optional.empty();
        }
    }

    // The driver's property, from the URL pgjdbc was given (its DataSources put their properties there too). Not a new
    // statement's getQueryTimeout(): a pool's own query timeout (WildFly's query-timeout), which never reaches the
    // commit, shows there as well.
    static int queryTimeout(String url) {
        Matcher m = QUERY_TIMEOUT.matcher(url == null ? "" : url);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    private boolean synchronous() {
        return !standbyNames.isBlank() && !"local".equals(synchronousCommit) && !"off".equals(synchronousCommit);
    }

    /** What an operator must change before a failover can be trusted with acknowledged outcomes; empty when nothing. */
    List<String> risks() {
        List<String> risks = new ArrayList<>();
        if (!synchronous() && walSenders > 0) {
            risks.add("IDEM-W022 " + walSenders + " standby(s) replicate the record store asynchronously"
                    + " (synchronous_standby_names='" + standbyNames + "', synchronous_commit=" + synchronousCommit
                    + "): a failover to one of them can lose outcomes already acknowledged, and their retries run"
                    + " again. Set synchronous_standby_names and synchronous_commit=on (README, Scaling out)");
        }
        if (synchronous() && queryTimeoutSeconds > 0) {
            risks.add("IDEM-W023 the record store's connections carry a query timeout (" + queryTimeoutSeconds + " s,"
                    + " pgjdbc's queryTimeout): it cancels an XA commit's wait for the synchronous standby, and"
                    + " PostgreSQL then reports the commit as successful though the standby may not have it; a"
                    + " failover can lose such an acknowledged outcome. Remove queryTimeout from the datasource (the"
                    + " server's query-timeout of the pool is safe)");
        }
        if (synchronous() && statementTimeoutMillis > 0) {
            risks.add("IDEM-W023 statement_timeout=" + statementTimeoutMillis + " ms: it cancels the wait of a"
                    + " two-phase COMMIT PREPARED (a transaction with a second XA resource, e.g. a JMS message) for"
                    + " the synchronous standby, and PostgreSQL then reports the commit as successful though the"
                    + " standby may not have it. Set statement_timeout=0 for the application's role or database");
        }
        return risks;
    }
}
