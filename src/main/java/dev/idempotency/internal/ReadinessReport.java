package dev.idempotency.internal;

import java.util.Map;

/**
 * Whether this node can answer idempotent requests now, with what a health endpoint shows about it: the record
 * store reachable and its table present, the protocol's clock known. Values are strings or longs.
 */
public record ReadinessReport(boolean up, Map<String, Object> data) {
    public ReadinessReport {
        data = Map.copyOf(data);
    }
}
