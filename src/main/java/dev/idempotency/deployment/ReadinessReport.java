package dev.idempotency.deployment;

import dev.idempotency.jdbc.DatabaseClock;
import dev.idempotency.spi.RecordStore;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Optional;

import java.util.Map;

/**
 * Whether this node can answer idempotent requests now, with what a health endpoint shows about it: the record
 * store reachable and its table present, the protocol's clock known. Values are strings or longs.
 */
public record ReadinessReport(boolean up, Map<String, Object> data) {
    /** A scope key no operation has (scope keys are digests in hex): reading it proves the table answers. */
    private static final String PROBE_KEY = "readiness-probe";

    public ReadinessReport {
        data = Map.copyOf(data);
    }

    /** A deployment that has not started: not ready. */
    static ReadinessReport notStarted() {
        return new ReadinessReport(false, Map.of("store", "not started"));
    }

    /**
     * Probes {@code store} with one read of a key no operation has, and tells whether {@code clock}'s time is known
     * (the database's, once it answered since deployment; an offset kept from an earlier answer is still known).
     */
    static ReadinessReport probe(RecordStore store, Clock clock) {
        Map<String, Object> data = new LinkedHashMap<>();
        boolean up = true;
        try {
            store.find(PROBE_KEY);
            data.put("store", "reachable");
        } catch (RuntimeException e) {
            up = false;
            data.put("store", "unavailable: " + e.getMessage());
        }
        if (clock instanceof DatabaseClock databaseClock) {
            Optional<Duration> sinceAnswer = databaseClock.sinceLastAnswer();
            if (sinceAnswer.isPresent()) {
                data.put("clock", "database");
                data.put("clock-offset-ms", databaseClock.offset().toMillis());
                data.put("clock-measured-seconds-ago", sinceAnswer.get().toSeconds());
            } else {
                up = false;
                data.put("clock", "unknown: the database has not told its time since deployment");
            }
        } else {
            data.put("clock", "local");
        }
        return new ReadinessReport(up, data);
    }
}
