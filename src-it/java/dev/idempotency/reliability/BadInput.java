package dev.idempotency.reliability;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

/** Generated hostile requests: bad keys, bad bodies, bad credentials, and a few good ones among them. */
final class BadInput {
    /** One generated request, with the idempotency key it carries (null when none or not a valid key). */
    record Case(String kind, RawHttp.Request request, String validKey, String user) {
    }

    private final Random random;
    private final String run;
    private int counter;

    BadInput(long seed, String run) {
        this.random = new Random(seed);
        this.run = run;
    }

    Case next() {
        List<Supplier<Case>> kinds = List.of(
                () -> keyCase("key-empty", ""), () -> keyCase("key-256", "k".repeat(256 + random.nextInt(2000))),
                () -> keyCase("key-control", "k" + (char) random.nextInt(32) + "x"),
                () -> keyCase("key-del", "k\u007fx"),
                () -> rawKeyCase("key-utf8", ("caf\u00e9-" + random.nextInt()).getBytes(StandardCharsets.UTF_8)),
                () -> keyCase("sf-unterminated", "\"abc"), () -> keyCase("sf-empty", "\"\""),
                () -> keyCase("sf-bad-escape", "\"a\\b\""), () -> keyCase("sf-inner-quote", "\"a\"b\""),
                () -> keyCase("sf-trailing-backslash", "\"abc\\\""),
                this::keyTwice, this::malformedJson, this::deepNesting, this::hugeNumber, this::duplicateKeys,
                this::wrongContentType, this::noAuth, this::wrongPassword, this::valid, this::invalidPayment,
                this::notJsonAtAll, this::hugeExponent);
        return kinds.get(random.nextInt(kinds.size())).get();
    }

    /** A body larger than the library's request limit (1 MiB by default). */
    Case tenMegabytes() {
        String key = key();
        byte[] body = new byte[10 * 1024 * 1024];
        java.util.Arrays.fill(body, (byte) ' ');
        body[0] = '[';
        body[body.length - 1] = ']';
        return new Case("body-10MB", base("alice", key).body(body), key, "alice");
    }

    private Case keyCase(String kind, String key) {
        return rawKeyCase(kind, key.getBytes(StandardCharsets.ISO_8859_1));
    }

    private Case rawKeyCase(String kind, byte[] key) {
        RawHttp.Request r = auth(new RawHttp.Request(), "alice", "alice").header("Content-Type", "application/json")
                .header("Idempotency-Key", key).body(payment(order()));
        return new Case(kind, r, null, "alice");
    }

    private Case keyTwice() {
        RawHttp.Request r = auth(new RawHttp.Request(), "alice", "alice").header("Content-Type", "application/json")
                .header("Idempotency-Key", key()).header("Idempotency-Key", key()).body(payment(order()));
        return new Case("key-twice", r, null, "alice");
    }

    private Case malformedJson() {
        String[] bodies = {"{", "{\"amount\":", "[1,]", "{'a':1}", "NaN", "{\"a\":1} x", "\u0000", "{\"a\":01}"};
        return withBody("json-malformed", bodies[random.nextInt(bodies.length)].getBytes(StandardCharsets.UTF_8));
    }

    private Case deepNesting() {
        int depth = 100 + random.nextInt(5000);
        return withBody("json-deep", ("[".repeat(depth) + "]".repeat(depth)).getBytes(StandardCharsets.UTF_8));
    }

    private Case hugeNumber() {
        return withBody("json-huge-number", ("{\"merchantOrderNo\":\"" + order() + "\",\"amount\":1" + "0".repeat(1000 + random.nextInt(5000))
                + ",\"currency\":\"EUR\"}").getBytes(StandardCharsets.UTF_8));
    }

    private Case hugeExponent() {
        return withBody("json-huge-exponent", ("{\"merchantOrderNo\":\"" + order() + "\",\"amount\":1e" + (999_999_999 + random.nextInt(1000))
                + ",\"currency\":\"EUR\"}").getBytes(StandardCharsets.UTF_8));
    }

    private Case duplicateKeys() {
        return withBody("json-duplicate-keys", ("{\"merchantOrderNo\":\"" + order() + "\",\"amount\":1,\"amount\":2,\"currency\":\"EUR\"}")
                .getBytes(StandardCharsets.UTF_8));
    }

    private Case notJsonAtAll() {
        byte[] junk = new byte[1 + random.nextInt(200)];
        random.nextBytes(junk);
        return withBody("json-binary-junk", junk);
    }

    private Case wrongContentType() {
        String key = key();
        RawHttp.Request r = auth(new RawHttp.Request(), "alice", "alice").header("Content-Type", "text/plain")
                .header("Idempotency-Key", key).body(payment(order()));
        return new Case("content-type-wrong", r, key, "alice");
    }

    private Case noAuth() {
        RawHttp.Request r = new RawHttp.Request().header("Content-Type", "application/json").header("Idempotency-Key", key())
                .body(payment(order()));
        return new Case("auth-missing", r, null, null);
    }

    private Case wrongPassword() {
        RawHttp.Request r = auth(new RawHttp.Request(), "alice", "wrong").header("Content-Type", "application/json")
                .header("Idempotency-Key", key()).body(payment(order()));
        return new Case("auth-wrong", r, null, null);
    }

    private Case valid() {
        String key = key();
        return new Case("valid", base("bob", key).body(payment(order())), key, "bob");
    }

    private Case invalidPayment() {
        String key = key();
        return new Case("payment-invalid", base("carol", key).body(("{\"merchantOrderNo\":\"" + order()
                + "\",\"amount\":-5,\"currency\":\"EUR\"}").getBytes(StandardCharsets.UTF_8)), key, "carol");
    }

    private Case withBody(String kind, byte[] body) {
        String key = key();
        return new Case(kind, base("alice", key).body(body), key, "alice");
    }

    private RawHttp.Request base(String user, String key) {
        return auth(new RawHttp.Request(), user, user).header("Content-Type", "application/json").header("Idempotency-Key", key);
    }

    private static RawHttp.Request auth(RawHttp.Request r, String user, String password) {
        return r.header("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                (user + ":" + password).getBytes(StandardCharsets.UTF_8)));
    }

    private byte[] payment(String order) {
        return ("{\"merchantOrderNo\":\"" + order + "\",\"amount\":" + (1 + random.nextInt(500)) + ",\"currency\":\"EUR\"}")
                .getBytes(StandardCharsets.UTF_8);
    }

    private String key() {
        return "fuzz-" + run + "-" + (counter++);
    }

    private String order() {
        return "Z" + (counter++) + "-" + run;
    }

    static List<String> kinds(List<Case> cases) {
        List<String> out = new ArrayList<>();
        cases.forEach(c -> out.add(c.kind()));
        return out;
    }
}
