package dev.idempotency.reliability;

import dev.idempotency.Scope;
import dev.idempotency.core.ScopeDigest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The operations (keys) of a fault test: who sends each, with which merchant order and body. */
final class Operations {
    private static final Map<String, String> TENANT = Map.of("alice", "acme", "bob", "acme", "carol", "globex",
            "mallory", "globex");
    private static final List<String> USERS = List.of("alice", "bob", "carol");

    /** The demo's synchronous payment endpoint, and its asynchronous one (POST /payments/async). */
    static final String PAYMENTS = "payments.create";
    static final String ASYNC_PAYMENTS = "payments.async";
    /** The demo's synchronous payments whose claim is in the business transaction (POST /payments/one-commit). */
    static final String ONE_COMMIT_PAYMENTS = "payments.one-commit";
    /** The demo's payment commands, sent as messages by POST /payment-commands, keyed by their commandId. */
    static final String COMMANDS = "payments.commands";

    /**
     * One operation: an idempotency key, its caller, its business key and its request body, sent to an endpoint
     * ({@link #PAYMENTS}, {@link #ASYNC_PAYMENTS}, {@link #ONE_COMMIT_PAYMENTS} or {@link #COMMANDS}).
     */
    record Operation(String key, String user, String order, String body, String otherBody, String endpoint) {
        /** The record's primary key, as the library computes it (the demo's ScopeResolver: tenant by user). */
        String scopeKey() {
            return Operations.scopeKey(new Scope(TENANT.get(user), user, endpoint, key));
        }

        /** The path the operation is posted to, under the demo's base URI. */
        String path() {
            return switch (endpoint) {
                case ASYNC_PAYMENTS -> "api/payments/async";
                case ONE_COMMIT_PAYMENTS -> "api/payments/one-commit";
                case COMMANDS -> "api/payment-commands";
                default -> "api/payments";
            };
        }

        /** The key the payments service sent the acquirer (IdempotencyContext.derive("acquirer.charge")). */
        String chargeKey() {
            return ScopeDigest.derive(scopeKey(), "acquirer.charge");
        }
    }

    // The nodes' secrets, which key the scope digest: the run's (src-it/provision.sh), until a scenario rotates it.
    private static volatile ScopeDigest digest;
    private static final java.util.Map<List<String>, String> FOUND_UNDER = new java.util.concurrent.ConcurrentHashMap<>();

    /** The record's primary key of a user's key on payments.create. */
    static String scopeKey(String user, String key) {
        return scopeKey(new Scope(TENANT.get(user), user, "payments.create", key));
    }

    /**
     * The record's primary key of a scope, as the nodes compute it; after a rotation, the key under the secret
     * its record was made with (the nodes find it there too).
     */
    static String scopeKey(Scope scope) {
        if (digest == null) {
            digest = new ScopeDigest(runSecret(), List.of());
        }
        List<String> keys = digest.keys(scope);
        if (keys.size() > 1) {
            String known = FOUND_UNDER.get(keys);
            if (known != null) {
                return known;
            }
            try {
                for (String candidate : keys) {
                    if (Checker.number("SELECT COUNT(*) FROM idempotency_record WHERE scope_key = ?", candidate) > 0) {
                        // A record stays under the key it was made with: found once, it is there for good.
                        FOUND_UNDER.put(keys, candidate);
                        return candidate;
                    }
                }
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException(e);
            }
        }
        return keys.get(0);
    }

    /** After a rotation of the nodes' secret: the one they use and those they still accept. */
    static void secretsInUse(String current, String... accepted) {
        digest = new ScopeDigest(utf8(current), java.util.Arrays.stream(accepted).map(Operations::utf8).toList());
    }

    /** The run's secret, as every node starts with it. */
    static String runSecretText() {
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of(System.getProperty("it.server.dir") + ".secret"))
                    .trim();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static byte[] runSecret() {
        return utf8(runSecretText());
    }

    private static byte[] utf8(String secret) {
        return secret.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    static List<Operation> create(String run, int count) {
        return create(run, count, null);
    }

    /** Operations of one user, or spread over alice, bob and carol when {@code user} is null. */
    static List<Operation> create(String run, int count, String user) {
        return create(run, count, user, PAYMENTS);
    }

    /** Operations spread over alice, bob and carol, sent to {@code endpoint}. */
    static List<Operation> create(String run, int count, String user, String endpoint) {
        List<Operation> ops = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String order = "F" + i + "-" + run;
            String key = "fault-" + run + "-" + i;
            // A command carries its key in its body (the listener's keySource = BODY_FIELD, commandId).
            String command = COMMANDS.equals(endpoint) ? "\"commandId\":\"" + key + "\"," : "";
            String body = "{" + command + "\"merchantOrderNo\":\"" + order + "\",\"amount\":" + (i % 97 + 1)
                    + ".25,\"currency\":\"EUR\"}";
            String other = body.replace(".25,", ".75,");
            ops.add(new Operation(key, user != null ? user : USERS.get(i % USERS.size()), order, body, other, endpoint));
        }
        return ops;
    }

    private Operations() {
    }
}
