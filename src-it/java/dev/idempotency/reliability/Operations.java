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

    /** One operation: an idempotency key, its caller, its business key and its request body. */
    record Operation(String key, String user, String order, String body, String otherBody) {
        /** The record's primary key, as the library computes it (the demo's ScopeResolver: tenant by user). */
        String scopeKey() {
            return Operations.scopeKey(user, key);
        }

        /** The key the payments service sent the acquirer (IdempotencyContext.derive("acquirer.charge")). */
        String chargeKey() {
            return ScopeDigest.derive(scopeKey(), "acquirer.charge");
        }
    }

    /** The record's primary key of a user's key on payments.create. */
    static String scopeKey(String user, String key) {
        return ScopeDigest.of(new Scope(TENANT.get(user), user, "payments.create", key));
    }

    static List<Operation> create(String run, int count) {
        return create(run, count, null);
    }

    /** Operations of one user, or spread over alice, bob and carol when {@code user} is null. */
    static List<Operation> create(String run, int count, String user) {
        List<Operation> ops = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String order = "F" + i + "-" + run;
            String body = "{\"merchantOrderNo\":\"" + order + "\",\"amount\":" + (i % 97 + 1) + ".25,\"currency\":\"EUR\"}";
            String other = body.replace(".25,", ".75,");
            ops.add(new Operation("fault-" + run + "-" + i, user != null ? user : USERS.get(i % USERS.size()), order,
                    body, other));
        }
        return ops;
    }

    private Operations() {
    }
}
