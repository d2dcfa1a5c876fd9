package dev.idempotency.reliability;

/** How big the fault scenarios run: CI's smaller size, or the full one (scripts/reliability.sh). */
enum Scale {
    CI(16, 60, 2, 5, 6, 1500, 2, 12),
    FULL(64, 500, 5, 20, 12, 10_000, 10, 40);

    final int clients;
    final int keys;
    final int minSends;
    final int maxSends;
    /** Operations in flight when a node dies; at most 4 per user, below the demo's limit of 5. */
    final int crashKeys;
    final int fuzzRequests;
    final int hugeBodies;
    /** How long the steady load of the purge scenario lasts. */
    final int purgeSeconds;

    Scale(int clients, int keys, int minSends, int maxSends, int crashKeys, int fuzzRequests, int hugeBodies,
          int purgeSeconds) {
        this.clients = clients;
        this.keys = keys;
        this.minSends = minSends;
        this.maxSends = maxSends;
        this.crashKeys = crashKeys;
        this.fuzzRequests = fuzzRequests;
        this.hugeBodies = hugeBodies;
        this.purgeSeconds = purgeSeconds;
    }

    static Scale current() {
        return "full".equalsIgnoreCase(System.getProperty("reliability.scale", "ci")) ? FULL : CI;
    }
}
