package dev.idempotency.reliability;

import dev.idempotency.IdempotencyState;

import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Clients that do what every answer's {@code Idempotency-State} says, literally (issue 33): {@code applied} — done;
 * {@code in-progress}, {@code unknown} or {@code next=same-key} — the same key again after {@code Retry-After};
 * {@code not-applied;next=new-key} — the same payment under a new key, at once; {@code next=stop} — done. An attempt
 * that got no answer is sent again with the same key. A wrong {@code new-key} (one said where something was applied
 * under the key, here or at the acquirer) shows as a second payment or a second charge for one merchant order, which
 * {@link #violations} counts by merchant order, where no unique constraint of the payments table can hide it: the
 * acquirer's charges have none.
 */
final class LiteralClients {
    private static final int MAX_SENDS = 60;

    /** How a client treats the answers: as they say, or (for the checker's self-test) switching keys when told not to. */
    enum Obedience {
        LITERAL,
        /** Takes any retryable answer as leave to use a new key: what a wrong {@code new-key} would make a literal client do. */
        SWITCHES_KEYS_ON_ANY_RETRYABLE_ANSWER
    }

    /** One merchant order as its client paid it: every key it used, the keys it left after a new-key, its last answer. */
    record Order(List<Operations.Operation> keys, List<Operations.Operation> abandoned, LoadClient.Answer last) {
        Operations.Operation first() {
            return keys.get(0);
        }
    }

    private LiteralClients() {
    }

    /**
     * Pays one merchant order, from {@code first}'s key on: each send goes to the node {@code node} gives and carries
     * the fault headers {@code faults} gives for that send (name, value; none when empty).
     */
    static Order pay(LoadClient client, Operations.Operation first, Supplier<URI> node, Supplier<String[]> faults,
                     Obedience obedience) {
        List<Operations.Operation> keys = new ArrayList<>(List.of(first));
        List<Operations.Operation> abandoned = new ArrayList<>();
        Operations.Operation op = first;
        LoadClient.Answer answer = new LoadClient.Answer(0, null, "", "");
        for (int sent = 0; sent < MAX_SENDS; sent++) {
            answer = client.send(node.get(), op, true, faults.get());
            Optional<IdempotencyState> state = Optional.ofNullable(answer.state()).flatMap(IdempotencyState::parse);
            if (state.isEmpty()) {
                // No answer (a node dying), or one from the server around the application: the same key, later.
                LoadClient.pause(answer.status() == 0 ? 500 : answer.retryAfterMillis());
                continue;
            }
            IdempotencyState said = state.get();
            if (said.state() == IdempotencyState.Applied.APPLIED || said.next() == IdempotencyState.Next.STOP) {
                return new Order(keys, abandoned, answer);
            }
            boolean newKey = said.next() == IdempotencyState.Next.NEW_KEY
                    || (obedience == Obedience.SWITCHES_KEYS_ON_ANY_RETRYABLE_ANSWER
                    && said.state() == IdempotencyState.Applied.NOT_APPLIED);
            if (newKey) {
                abandoned.add(op);
                op = new Operations.Operation("literal-" + UUID.randomUUID(), op.user(), op.order(), op.body(),
                        op.otherBody(), op.endpoint());
                keys.add(op);
                continue;
            }
            LoadClient.pause(answer.retryAfterMillis());
        }
        return new Order(keys, abandoned, answer);
    }

    /**
     * The fault headers of a send: one send in {@code oneIn} fails — before the acquirer is called, after its charge,
     * at the commit, or with the acquirer's answer lost (it takes 11 s to charge, past the payments service's 10 s read
     * timeout, and still charges).
     */
    static Supplier<String[]> someFaults(Random random, int oneIn) {
        String[][] kinds = {{"X-Demo-Fail", "before-charge"}, {"X-Demo-Fail", "before-charge"},
                {"X-Demo-Fail", "transient"}, {"X-Demo-Fail", "at-commit"}, {"X-Demo-Acquirer-Delay-Ms", "11000"}};
        return () -> {
            synchronized (random) {
                return random.nextInt(oneIn) == 0 ? kinds[random.nextInt(kinds.length)] : new String[0];
            }
        };
    }

    /** The fault headers of a send that fails after the charge, once; none after that. */
    static Supplier<String[]> failingAfterTheChargeOnce() {
        java.util.concurrent.atomic.AtomicBoolean failed = new java.util.concurrent.atomic.AtomicBoolean();
        return () -> failed.getAndSet(true) ? new String[0] : new String[] {"X-Demo-Fail", "transient"};
    }

    /**
     * What the database says against the orders: per merchant order one payment and one charge at the acquirer
     * (counted by merchant order: a charge under an abandoned key is a second one), a last answer that is the
     * payment's ({@code 201}, {@code applied}); per key left after a {@code new-key}: nothing applied under it —
     * its record neither succeeded nor failed finally, no charge under its derived key.
     */
    static List<String> violations(List<Order> orders, Checker.Database db) throws SQLException {
        List<String> found = new ArrayList<>();
        try (Connection c = db.connect()) {
            for (Order order : orders) {
                String merchantOrder = order.first().order();
                int payments = count(c, "SELECT COUNT(*) FROM demo_payment WHERE merchant_order_no = ?", merchantOrder);
                int charges = count(c, "SELECT COUNT(*) FROM demo_charge WHERE merchant_order_no = ?", merchantOrder);
                if (payments != 1 || charges != 1) {
                    found.add(merchantOrder + ": " + payments + " payments, " + charges + " charges under "
                            + order.keys().size() + " keys");
                }
                if (order.last().status() != 201 || order.last().state() == null
                        || !order.last().state().startsWith("applied")) {
                    found.add(merchantOrder + ": its client ended with " + order.last().status() + " "
                            + order.last().state());
                }
                for (Operations.Operation left : order.abandoned()) {
                    String status = single(c, "SELECT status FROM idempotency_record WHERE scope_key = ?", left.scopeKey());
                    int chargedUnder = count(c, "SELECT COUNT(*) FROM demo_charge WHERE idempotency_key = ?",
                            left.chargeKey());
                    if ("SUCCEEDED".equals(status) || "FAILED_FINAL".equals(status) || chargedUnder > 0) {
                        found.add(merchantOrder + ": key " + left.key() + " was left after new-key, but its record is "
                                + status + " with " + chargedUnder + " charges under it");
                    }
                }
            }
        }
        return found;
    }

    private static int count(Connection c, String sql, Object arg) throws SQLException {
        String value = single(c, sql, arg);
        return value == null ? 0 : Integer.parseInt(value);
    }

    private static String single(Connection c, String sql, Object arg) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, arg);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }
}
