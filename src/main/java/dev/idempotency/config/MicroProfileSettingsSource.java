package dev.idempotency.config;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

import java.util.Optional;

/** Reads {@code idempotency.*} through MicroProfile Config; loaded only when its API is on the class path. */
final class MicroProfileSettingsSource implements SettingsSource {
    private final Config config;

    MicroProfileSettingsSource(ClassLoader loader) {
        this.config = ConfigProvider.getConfig(loader);
    }

    @Override
    public Optional<String> get(String key) {
        return config.getOptionalValue(key, String.class).map(String::trim).filter(v -> !v.isEmpty());
    }
}
