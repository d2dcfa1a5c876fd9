package dev.idempotency.config;

import java.util.Optional;

/** Where raw {@code idempotency.*} values come from: MicroProfile Config when present, else system properties. */
@FunctionalInterface
public interface SettingsSource {

    /** The raw value of a key, trimmed; empty when unset or blank. */
    Optional<String> get(String key);

    /**
     * MicroProfile Config (all its sources: system properties, environment, microprofile-config.properties)
     * when the server has it, else system properties and then environment variables
     * ({@code IDEMPOTENCY_SECRET} for {@code idempotency.secret}).
     */
    static SettingsSource detect(ClassLoader loader) {
        if (!ServerApis.visible("org.eclipse.microprofile.config.ConfigProvider", loader)) {
            return SettingsSource::systemOrEnvironment;
        }
        try {
            return new MicroProfileSettingsSource(loader);
        } catch (IllegalStateException noImplementation) {
            // The API is visible but no implementation is installed (ConfigProviderResolver found none).
            return SettingsSource::systemOrEnvironment;
        }
    }

    static Optional<String> systemOrEnvironment(String key) {
        String value = System.getProperty(key);
        if (value == null) {
            value = System.getenv(key.toUpperCase(java.util.Locale.ROOT).replaceAll("[^A-Z0-9]", "_"));
        }
        return value == null || value.isBlank() ? Optional.empty() : Optional.of(value.trim());
    }
}
