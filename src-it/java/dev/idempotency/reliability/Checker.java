package dev.idempotency.reliability;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The invariants of a fault test, checked with SQL on the database once the load has settled:
 * (a) per key at most one payment and at most one charge per derived key; (b) every acknowledged success
 * or final failure has its committed record (and payment), every payment has its SUCCEEDED record;
 * (c) every success of a key is the same bytes; (d) no PROCESSING record past its lease; (e) no 5xx but
 * 503 with Retry-After; (f) no answer whose Idempotency-State the database contradicts afterwards: an answer that
 * said {@code applied} has its committed record (and, for a success, its payment); one that said {@code not-applied}
 * and {@code stop} its final failure recorded and no payment; every 2xx and 4xx answer says its state.
 */
final class Checker {
    /** Where the checker reads: the run's database, or a dedicated one a scenario started itself. */
    interface Database {
        Connection connect() throws SQLException;

        /** The database's current UTC time as an SQL expression. */
        String utcNow();
    }

    /** The counts the report prints; {@link #violations()} empty means every invariant held. */
    record Result(int keys, int executed, int duplicatePayments, int duplicateCharges, int lostAcknowledgements,
                  int orphanPayments, int driftingReplays, int stuckRecords, int serverErrors, int contradictedStates,
                  List<String> violations) {
    }

    static Result check(List<Operations.Operation> ops, History history) throws SQLException {
        return check(ops, history, ItDatabase.current());
    }

    static Result check(List<Operations.Operation> ops, History history, Database db) throws SQLException {
        List<String> violations = new ArrayList<>();
        Map<String, List<History.Op>> byKey = new HashMap<>();
        history.ops().forEach(op -> byKey.computeIfAbsent(op.key(), k -> new ArrayList<>()).add(op));
        int executed = 0;
        int duplicatePayments = 0;
        int duplicateCharges = 0;
        int lost = 0;
        int orphans = 0;
        int drifting = 0;
        int serverErrors = 0;
        int contradicted = 0;
        try (Connection c = db.connect()) {
            for (Operations.Operation op : ops) {
                int payments = count(c, "SELECT COUNT(*) FROM demo_payment WHERE merchant_order_no = ?", op.order());
                int charges = count(c, "SELECT COUNT(*) FROM demo_charge WHERE idempotency_key = ?", op.chargeKey());
                String status = single(c, "SELECT status FROM idempotency_record WHERE scope_key = ?", op.scopeKey());
                executed += payments;
                if (payments > 1) {
                    duplicatePayments++;
                    violations.add(op.key() + ": " + payments + " payments");
                }
                if (charges > 1) {
                    duplicateCharges++;
                    violations.add(op.key() + ": " + charges + " charges");
                }
                if (payments == 1 && !"SUCCEEDED".equals(status)) {
                    orphans++;
                    violations.add(op.key() + ": a payment without its SUCCEEDED record (" + status + ")");
                }
                List<History.Op> seen = byKey.getOrDefault(op.key(), List.of());
                Set<String> successBodies = new HashSet<>();
                for (History.Op h : seen) {
                    if (h.kind() != History.Kind.OK) {
                        continue;
                    }
                    // A 202 acknowledges an asynchronous operation accepted, not done: its outcome comes later.
                    if (h.status() >= 200 && h.status() < 300 && h.status() != 202) {
                        successBodies.add(h.bodyHash());
                        if (payments != 1 || !"SUCCEEDED".equals(status)) {
                            lost++;
                            violations.add(op.key() + ": acknowledged " + h.status() + " but " + payments
                                    + " payments, record " + status);
                        }
                    }
                    if (h.status() >= 500 && !(h.status() == 503 && h.retryAfter())) {
                        serverErrors++;
                        violations.add(op.key() + ": " + h.status() + " from " + h.node());
                    }
                    // A command is posted to a resource of the demo's own that queues it; its consumer is idempotent.
                    String contradiction = contradiction(h, payments, status,
                            !Operations.COMMANDS.equals(op.endpoint()));
                    if (contradiction != null) {
                        contradicted++;
                        violations.add(op.key() + ": " + h.status() + " from " + h.node() + " " + contradiction);
                    }
                }
                if (successBodies.size() > 1) {
                    drifting++;
                    violations.add(op.key() + ": " + successBodies.size() + " different success bodies");
                }
            }
            int stuck = count(c, "SELECT COUNT(*) FROM idempotency_record WHERE status = 'PROCESSING'"
                    + " AND lease_until < " + db.utcNow());
            if (stuck > 0) {
                violations.add(stuck + " PROCESSING records past their lease");
            }
            return new Result(ops.size(), executed, duplicatePayments, duplicateCharges, lost, orphans, drifting, stuck,
                    serverErrors, contradicted, violations);
        }
    }

    /**
     * The operations left without a payment because a request with their other body (a misuse of the key) charged the
     * acquirer under the key's derived key: no payment for the order, one charge under the derived key, and the
     * other body sent under the key.
     */
    static List<Operations.Operation> blockedByAMisuseDownstream(List<Operations.Operation> ops, History history)
            throws SQLException {
        Set<String> misused = new HashSet<>();
        history.ops().stream().filter(h -> !h.sameBody()).forEach(h -> misused.add(h.key()));
        List<Operations.Operation> blocked = new ArrayList<>();
        try (Connection c = ItDatabase.current().connect()) {
            for (Operations.Operation op : ops) {
                if (misused.contains(op.key())
                        && count(c, "SELECT COUNT(*) FROM demo_payment WHERE merchant_order_no = ?", op.order()) == 0
                        && count(c, "SELECT COUNT(*) FROM demo_charge WHERE idempotency_key = ? AND amount = ?",
                        op.chargeKey(), otherAmount(op)) == 1) {
                    blocked.add(op);
                }
            }
        }
        return blocked;
    }

    // The amount of an operation's other body (Operations: .75 where its own has .25).
    private static java.math.BigDecimal otherAmount(Operations.Operation op) {
        java.util.regex.Matcher amount = java.util.regex.Pattern.compile("\"amount\":([0-9.]+)").matcher(op.otherBody());
        if (!amount.find()) {
            throw new IllegalStateException("no amount in " + op.otherBody());
        }
        return new java.math.BigDecimal(amount.group(1));
    }

    /**
     * What the database says against an answer's Idempotency-State, or null. The server itself may answer some
     * statuses (401 before the application, 503 from a suspended node), so only successes and the protocol's own
     * conflicts (409, 422, 425, 429) of an idempotent endpoint must carry it.
     */
    static String contradiction(History.Op answer, int payments, String recordStatus, boolean idempotentEndpoint) {
        String state = answer.state();
        if (state == null) {
            boolean mustSay = idempotentEndpoint && ((answer.status() >= 200 && answer.status() < 300)
                    || answer.status() == 409 || answer.status() == 422 || answer.status() == 425 || answer.status() == 429);
            return mustSay ? "said no Idempotency-State" : null;
        }
        boolean success = answer.status() >= 200 && answer.status() < 300 && answer.status() != 202;
        if (state.startsWith("applied;")) {
            boolean recorded = success ? "SUCCEEDED".equals(recordStatus) && payments == 1
                    : "SUCCEEDED".equals(recordStatus) || "FAILED_FINAL".equals(recordStatus);
            return recorded ? null : "said " + state + " but the record is " + recordStatus + " with " + payments
                    + " payments";
        }
        if (state.startsWith("not-applied;next=stop")) {
            return "FAILED_FINAL".equals(recordStatus) && payments == 0 ? null : "said " + state + " but the record is "
                    + recordStatus + " with " + payments + " payments";
        }
        if (success && !state.startsWith("applied;")) {
            return "a success that said " + state;
        }
        return null;
    }

    /**
     * Returns once {@code sql} (a count) is positive on the test database: a condition another party makes true (a
     * session seen waiting for a lock, a lease run out by the database's clock), at most 30 s.
     */
    static void await(String what, String sql, Object... args) throws SQLException {
        await(ItDatabase.current(), what, sql, args);
    }

    /** {@link #await(String, String, Object...)} on {@code db}. */
    static void await(Database db, String what, String sql, Object... args) throws SQLException {
        dev.idempotency.testing.Conditions.await(what, java.time.Duration.ofSeconds(30), () -> number(db, sql, args) > 0);
    }

    /** Returns once the lease of {@code op}'s record has run out by the database's clock (at most 30 s). */
    static void awaitLeaseRunOut(Operations.Operation op) throws SQLException {
        awaitLeaseRunOut(ItDatabase.current(), op);
    }

    /** {@link #awaitLeaseRunOut(Operations.Operation)} on {@code db}. */
    static void awaitLeaseRunOut(Database db, Operations.Operation op) throws SQLException {
        await(db, "the lease of " + op.key() + " run out", "SELECT COUNT(*) FROM idempotency_record WHERE scope_key = ?"
                + " AND lease_until < " + db.utcNow(), op.scopeKey());
    }

    /**
     * Returns once no record of {@code ops} holds a lease that runs on by the database's clock: what a crashed or
     * fenced executor left can be taken over by the next retry, and the checker's "no PROCESSING record past its
     * lease" means something.
     */
    static void awaitLeasesRunOut(Database db, List<Operations.Operation> ops) throws SQLException {
        for (int from = 0; from < ops.size(); from += 500) {
            List<Operations.Operation> some = ops.subList(from, Math.min(ops.size(), from + 500));
            String keys = String.join(",", java.util.Collections.nCopies(some.size(), "?"));
            await(db, "the leases of " + some.size() + " operations run out", "SELECT CASE WHEN COUNT(*) = 0 THEN 1 ELSE 0"
                    + " END FROM idempotency_record WHERE lease_until >= " + db.utcNow() + " AND scope_key IN (" + keys + ")",
                    some.stream().map(Operations.Operation::scopeKey).toArray());
        }
    }

    /** Returns once no record of {@code ops} is left on the test database (the purge has removed them). */
    static void awaitPurged(List<Operations.Operation> ops) throws SQLException {
        for (int from = 0; from < ops.size(); from += 500) {
            List<Operations.Operation> some = ops.subList(from, Math.min(ops.size(), from + 500));
            String keys = String.join(",", java.util.Collections.nCopies(some.size(), "?"));
            await(ItDatabase.current(), "the records of " + some.size() + " operations purged", "SELECT CASE WHEN"
                    + " COUNT(*) = 0 THEN 1 ELSE 0 END FROM idempotency_record WHERE scope_key IN (" + keys + ")",
                    some.stream().map(Operations.Operation::scopeKey).toArray());
        }
    }

    /** {@link #awaitLeasesRunOut(Database, List)} on the test database. */
    static void awaitLeasesRunOut(List<Operations.Operation> ops) throws SQLException {
        awaitLeasesRunOut(ItDatabase.current(), ops);
    }

    /** One number from the test database (a count, or a function's result). */
    static int number(String sql, Object... args) throws SQLException {
        return number(ItDatabase.current(), sql, args);
    }

    static int number(Database db, String sql, Object... args) throws SQLException {
        try (Connection c = db.connect()) {
            return count(c, sql, args);
        }
    }

    /** One value from the test database, or null when the query finds no row. */
    static String text(String sql, Object... args) throws SQLException {
        return text(ItDatabase.current(), sql, args);
    }

    static String text(Database db, String sql, Object... args) throws SQLException {
        try (Connection c = db.connect()) {
            return single(c, sql, args);
        }
    }

    /** The status of the record with that primary key, or null when there is none. */
    static String recordStatus(String scopeKey) throws SQLException {
        try (Connection c = ItDatabase.current().connect()) {
            return single(c, "SELECT status FROM idempotency_record WHERE scope_key = ?", scopeKey);
        }
    }

    /** How many executions the operation's record counts (attempts). */
    static int attempts(Operations.Operation op) throws SQLException {
        return attempts(ItDatabase.current(), op);
    }

    static int attempts(Database db, Operations.Operation op) throws SQLException {
        try (Connection c = db.connect()) {
            return count(c, "SELECT attempts FROM idempotency_record WHERE scope_key = ?", op.scopeKey());
        }
    }

    private static int count(Connection c, String sql, Object... args) throws SQLException {
        return Integer.parseInt(single(c, sql, args));
    }

    private static String single(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    private Checker() {
    }
}
