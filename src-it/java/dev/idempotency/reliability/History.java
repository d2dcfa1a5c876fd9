package dev.idempotency.reliability;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/**
 * Every request of a fault test as the client saw it: invoked, then ok (status, body hash), fail (an
 * error: nothing was received) or info (the client gave up waiting: either outcome is allowed, at most one).
 */
final class History {
    enum Kind { OK, FAIL, INFO }

    /**
     * One completed request; {@code atMillis}: when its answer (or failure) came, by the client's clock;
     * {@code tookMillis}: how long the client waited for it; {@code state}: its {@code Idempotency-State} (null
     * without one).
     */
    record Op(String key, String node, boolean sameBody, Kind kind, int status, String bodyHash, boolean retryAfter,
              String state, String error, long atMillis, long tookMillis) {
    }

    private final List<Op> ops = new CopyOnWriteArrayList<>();

    void ok(String key, String node, boolean sameBody, int status, byte[] body, boolean retryAfter, String state,
            long sentAt) {
        long now = System.currentTimeMillis();
        ops.add(new Op(key, node, sameBody, Kind.OK, status, sha256(body), retryAfter, state, null, now, now - sentAt));
    }

    void fail(String key, String node, boolean sameBody, String error, long sentAt) {
        long now = System.currentTimeMillis();
        ops.add(new Op(key, node, sameBody, Kind.FAIL, 0, null, false, null, error, now, now - sentAt));
    }

    void info(String key, String node, boolean sameBody, long sentAt) {
        long now = System.currentTimeMillis();
        ops.add(new Op(key, node, sameBody, Kind.INFO, 0, null, false, null, "client timeout", now, now - sentAt));
    }

    List<Op> ops() {
        return List.copyOf(ops);
    }

    /** How many answers of each status (0 for fail/info), for the report. */
    Map<String, Long> statusMix() {
        return ops.stream().collect(Collectors.groupingBy(
                op -> op.kind() == Kind.OK ? Integer.toString(op.status()) : op.kind().name().toLowerCase(),
                TreeMap::new, Collectors.counting()));
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
