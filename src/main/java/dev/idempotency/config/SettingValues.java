package dev.idempotency.config;

import dev.idempotency.IdempotencyDefinitionException;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How a setting's raw value is read: the configured value or its default, the most specific of an endpoint's keys, and
 * the forms values take (integers, durations, lists, secrets); an invalid one is {@code IDEM-C001}, naming its key.
 */
final class SettingValues {
    private final SettingsSource source;

    SettingValues(SettingsSource source) {
        this.source = source;
    }

    // The key a per-endpoint value was read from, so that an error names the line to fix.
    String keyOf(Setting setting, String endpoint) {
        return source.get(setting.key(endpoint)).isPresent() ? setting.key(endpoint) : setting.key();
    }

    // Endpoint configuration, then the annotation's value (when given), then the global key, then the default.
    String endpointRaw(Setting setting, String endpoint, String annotated) {
        return source.get(setting.key(endpoint))
                .orElseGet(() -> annotated != null && !annotated.isEmpty() ? annotated : raw(setting));
    }

    int nonNegative(Setting setting, String endpoint) {
        String value = endpointRaw(setting, endpoint, null);
        int parsed;
        try {
            parsed = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw invalid(keyOf(setting, endpoint), value, "must be an integer");
        }
        if (parsed < 0) {
            throw invalid(keyOf(setting, endpoint), value, "must be 0 or more");
        }
        return parsed;
    }

    static int positive(Setting setting, String value) {
        return positive(setting.key(), value);
    }

    static int positive(String key, String value) {
        int parsed;
        try {
            parsed = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw invalid(key, value, "must be an integer");
        }
        if (parsed <= 0) {
            throw invalid(key, value, "must be a positive integer");
        }
        return parsed;
    }

    static int intValue(Setting setting, String value) {
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw invalid(setting.key(), value, "must be an integer");
        }
    }

    static Duration duration(String key, String value) {
        try {
            return Duration.parse(value.trim());
        } catch (DateTimeParseException e) {
            throw invalid(key, value, "must be an ISO-8601 duration such as PT30S or P1D");
        }
    }

    boolean bool(Setting setting) {
        String value = raw(setting).toLowerCase(Locale.ROOT);
        if (!value.equals("true") && !value.equals("false")) {
            throw invalid(setting.key(), value, "must be true or false");
        }
        return value.equals("true");
    }

    String raw(Setting setting) {
        return source.get(setting.key()).orElse(setting.defaultValue() == null ? "" : setting.defaultValue());
    }

    List<String> list(Setting setting) {
        return splitList(raw(setting));
    }

    static List<String> splitList(String raw) {
        List<String> out = new ArrayList<>();
        for (String part : raw.split(",")) {
            if (!part.isBlank()) {
                out.add(part.trim());
            }
        }
        return out;
    }

    static byte[] utf8AtLeast32(String key, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        if (bytes.length < 32) {
            throw invalid(key, "(hidden)", "must be at least 32 bytes");
        }
        return bytes;
    }

    static IdempotencyDefinitionException invalid(String key, String value, String why) {
        return new IdempotencyDefinitionException("IDEM-C001 invalid configuration " + key + "='" + value + "': " + why);
    }

    Duration notNegative(Setting setting) {
        Duration value = duration(setting.key(), raw(setting));
        if (value.isNegative()) {
            throw invalid(setting.key(), raw(setting), "must not be negative");
        }
        return value;
    }
}
