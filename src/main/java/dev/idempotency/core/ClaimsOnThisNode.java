package dev.idempotency.core;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The operations this node is claiming or running in business transactions ({@code ClaimMode.IN_TRANSACTION}), by
 * scope key, with how many requests hold or wait for each. A second request for one of them is a duplicate whose
 * claim will wait on the first's uncommitted row, holding a connection: only so many may wait at once. Duplicates
 * arriving on other nodes are counted there.
 */
final class ClaimsOnThisNode {
    private final ConcurrentHashMap<String, Integer> holders = new ConcurrentHashMap<>();

    /** Counts a request in; true when no other request of this node holds or waits for the key. */
    boolean enter(String scopeKey) {
        return holders.merge(scopeKey, 1, Integer::sum) == 1;
    }

    /** Counts a request out: its claim ended (its transaction committed or rolled back) or was never made. */
    void leave(String scopeKey) {
        holders.computeIfPresent(scopeKey, (key, count) -> count == 1 ? null : count - 1);
    }

    /** How many keys are held now (for tests: a key left behind would make its later requests wait as duplicates). */
    int size() {
        return holders.size();
    }
}
