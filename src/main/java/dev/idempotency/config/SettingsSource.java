package dev.idempotency.config;

import java.util.Optional;

/** Where raw {@code idempotency.*} values come from: MicroProfile Config when present, else system properties. */
@FunctionalInterface
public interface SettingsSource {

    /** The raw value of a key, trimmed; empty when unset or blank. */
    Optional<String> get(String key);
}
