package dev.idempotency.config;

import java.util.Locale;
import java.util.Optional;

/**
 * The {@link SettingsSource} a deployment reads: MicroProfile Config when the server has it, else system properties
 * and environment variables. Apart from the sources themselves, so that none of them names another.
 */
public final class SettingsSources {
    private SettingsSources() {
    }

    /**
     * MicroProfile Config (all its sources: system properties, environment, microprofile-config.properties)
     * when the server has it, else system properties and then environment variables
     * ({@code IDEMPOTENCY_SECRET} for {@code idempotency.secret}).
     */
    public static SettingsSource detect(ClassLoader loader) {
        if (!ServerApis.visible("org.eclipse.microprofile.config.ConfigProvider", loader)) {
            return SettingsSources::systemOrEnvironment;
        }
        try {
            return new MicroProfileSettingsSource(loader);
        } catch (IllegalStateException noImplementation) {
            // The API is visible but no implementation is installed (ConfigProviderResolver found none).
            return SettingsSources::systemOrEnvironment;
        }
    }

    /** A system property, else the environment variable of the same name in upper case ({@code IDEMPOTENCY_SECRET}). */
    public static Optional<String> systemOrEnvironment(String key) {
        String value = System.getProperty(key);
        if (value == null) {
            value = System.getenv(key.toUpperCase(Locale.ROOT).replaceAll("[^A-Z0-9]", "_"));
        }
        return value == null || value.isBlank() ? Optional.empty() : Optional.of(value.trim());
    }
}
