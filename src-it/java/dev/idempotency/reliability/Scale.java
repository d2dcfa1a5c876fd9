package dev.idempotency.reliability;

/** How big the fault scenarios run: CI's smaller size, or the full one (scripts/reliability.sh). */
enum Scale {
    CI(16, 60, 2, 5, 6),
    FULL(64, 500, 5, 20, 20);

    final int clients;
    final int keys;
    final int minSends;
    final int maxSends;
    final int crashKeys;

    Scale(int clients, int keys, int minSends, int maxSends, int crashKeys) {
        this.clients = clients;
        this.keys = keys;
        this.minSends = minSends;
        this.maxSends = maxSends;
        this.crashKeys = crashKeys;
    }

    static Scale current() {
        return "full".equalsIgnoreCase(System.getProperty("reliability.scale", "ci")) ? FULL : CI;
    }
}
