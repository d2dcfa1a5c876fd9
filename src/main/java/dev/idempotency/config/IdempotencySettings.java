package dev.idempotency.config;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyDefinitionException;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.KeyRules;
import dev.idempotency.core.CallScopeResolver;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import static dev.idempotency.config.SettingValues.duration;
import static dev.idempotency.config.SettingValues.intValue;
import static dev.idempotency.config.SettingValues.invalid;
import static dev.idempotency.config.SettingValues.positive;
import static dev.idempotency.config.SettingValues.utf8AtLeast32;

/**
 * The library's configuration, read and validated once at start-up. For a per-endpoint setting the
 * most specific value wins: {@code idempotency.endpoints.<endpoint>.<name>}, then the annotation member,
 * then {@code idempotency.<name>}, then the built-in default. Every invalid value is reported with its
 * key (message id {@code IDEM-C001}) and fails the deployment. One class, over 350 lines, because it is the one
 * place a global setting is read and validated (per-endpoint ones are {@link EndpointSettings}'); each accessor is a
 * few lines.
 */
public final class IdempotencySettings {
    /** Publicly known: only for {@code idempotency.insecure-development-secret=true}. */
    static final String DEVELOPMENT_SECRET = "idempotency-cdi insecure development secret, never use in production";

    private final SettingsSource source;
    private final SettingValues values;
    private final EndpointSettings endpoints;
    private final byte[] secret;
    private final List<byte[]> previousSecrets;
    private final boolean developmentSecret;
    private final KeyRules keyRules;
    private final Map<String, byte[]> encryptionKeys;
    private final String activeEncryptionKey;

    public IdempotencySettings(SettingsSource source) {
        this.source = source;
        this.values = new SettingValues(source);
        this.developmentSecret = values.bool(Setting.INSECURE_DEVELOPMENT_SECRET);
        Optional<String> configured = source.get(Setting.SECRET.key());
        if (configured.isEmpty() && !developmentSecret) {
            throw new IdempotencyDefinitionException("IDEM-C002 " + Setting.SECRET.key()
                    + " is not set: the request fingerprint needs a server secret of at least 32 bytes. Set it"
                    + " (server property, environment variable IDEMPOTENCY_SECRET or MicroProfile Config), or set "
                    + Setting.INSECURE_DEVELOPMENT_SECRET.key() + "=true for development only.");
        }
        this.secret = utf8AtLeast32(Setting.SECRET.key(), configured.orElse(DEVELOPMENT_SECRET));
        this.previousSecrets = new ArrayList<>();
        for (String previous : values.list(Setting.PREVIOUS_SECRETS)) {
            previousSecrets.add(utf8AtLeast32(Setting.PREVIOUS_SECRETS.key(), previous));
        }
        this.keyRules = keyRules();
        this.encryptionKeys = encryptionKeys();
        String active = values.raw(Setting.ENCRYPTION_ACTIVE_KEY);
        if (!active.isEmpty() && !encryptionKeys.containsKey(active)) {
            throw invalid(Setting.ENCRYPTION_ACTIVE_KEY.key(), active, "names no key of " + Setting.ENCRYPTION_KEYS.key());
        }
        if (active.isEmpty() && !encryptionKeys.isEmpty()) {
            throw invalid(Setting.ENCRYPTION_ACTIVE_KEY.key(), "", "must name one of the configured encryption keys");
        }
        this.activeEncryptionKey = active.isEmpty() ? null : active;
        this.endpoints = new EndpointSettings(source, values, activeEncryptionKey != null);
        // Validate the remaining global values now, so a typo fails start-up and not the first request.
        datasource();
        table();
        schema();
        usesDatabaseClock();
        interceptorPriority();
        anonymousAllowed();
        tenantSource();
        adminRole();
        positive(Setting.IN_FLIGHT_MAX_WAITERS, values.raw(Setting.IN_FLIGHT_MAX_WAITERS));
        positive(Setting.MAX_REQUEST_BYTES, values.raw(Setting.MAX_REQUEST_BYTES));
        positive(Setting.PURGE_BATCH_SIZE, values.raw(Setting.PURGE_BATCH_SIZE));
        purgeInterval();
        settleInterval();
        settleAfter();
        settleAcceptedInterval();
        settleAcceptedMaxAttempts();
        settleLookBack();
        problemBase();
    }

    public byte[] secret() {
        return secret.clone();
    }

    /**
     * Every secret accepted besides the current one: earlier ones after a rotation, or, in its first step, the
     * one about to become current. Their fingerprints match; records keyed with them are found and are not
     * claimed twice (docs/adr/0008).
     */
    public List<byte[]> previousSecrets() {
        return previousSecrets.stream().map(byte[]::clone).toList();
    }

    /** Whether the publicly known development secret is in use (logged loudly at start-up). */
    public boolean usesDevelopmentSecret() {
        return developmentSecret && source.get(Setting.SECRET.key()).isEmpty();
    }

    public KeyRules keyRules() {
        if (keyRules != null) {
            return keyRules;
        }
        int min = intValue(Setting.KEY_MIN_LENGTH, values.raw(Setting.KEY_MIN_LENGTH));
        int max = intValue(Setting.KEY_MAX_LENGTH, values.raw(Setting.KEY_MAX_LENGTH));
        if (min < 1 || max < min || max > 1024) {
            throw invalid(Setting.KEY_MAX_LENGTH.key(), min + ".." + max, "key lengths must satisfy 1 <= min <= max <= 1024");
        }
        String pattern = values.raw(Setting.KEY_PATTERN);
        try {
            return new KeyRules(min, max, pattern.isEmpty() ? null : Pattern.compile(pattern));
        } catch (PatternSyntaxException e) {
            throw invalid(Setting.KEY_PATTERN.key(), pattern, "is not a regular expression: " + e.getDescription());
        }
    }

    public Map<String, byte[]> encryptionKeys() {
        if (encryptionKeys != null) {
            return encryptionKeys;
        }
        Map<String, byte[]> keys = new LinkedHashMap<>();
        for (String entry : values.list(Setting.ENCRYPTION_KEYS)) {
            int colon = entry.indexOf(':');
            if (colon <= 0) {
                throw invalid(Setting.ENCRYPTION_KEYS.key(), "(hidden)", "entries must be id:base64");
            }
            byte[] key;
            try {
                key = Base64.getDecoder().decode(entry.substring(colon + 1));
            } catch (IllegalArgumentException e) {
                throw invalid(Setting.ENCRYPTION_KEYS.key(), "(hidden)", "key '" + entry.substring(0, colon) + "' is not base64");
            }
            if (key.length != 16 && key.length != 24 && key.length != 32) {
                throw invalid(Setting.ENCRYPTION_KEYS.key(), "(hidden)",
                        "key '" + entry.substring(0, colon) + "' must be 16, 24 or 32 bytes");
            }
            keys.put(entry.substring(0, colon), key);
        }
        return keys;
    }

    /** The id of the key new responses are sealed with, or null. */
    public String activeEncryptionKey() {
        return activeEncryptionKey;
    }

    public String datasource() {
        return values.raw(Setting.DATASOURCE);
    }

    public String table() {
        String table = values.raw(Setting.TABLE);
        if (!table.matches("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,62}")) {
            throw invalid(Setting.TABLE.key(), table, "must be an SQL identifier, optionally schema-qualified");
        }
        return table;
    }

    /** What the deployment does with the JDBC store's tables (docs/adr/0018). */
    public enum SchemaHandling {
        /** Fail unless the tables are at a schema version the library works with. */
        VALIDATE,
        /** Apply the scripts the tables lack (creating them when absent). */
        MIGRATE,
        /** Nothing: the operator's own store or tables. */
        NONE
    }

    /**
     * {@code idempotency.schema}; {@code create} and the earlier {@code create-schema=true} mean migrate. The two
     * settings may not say different things.
     */
    public SchemaHandling schema() {
        String value = values.raw(Setting.SCHEMA).toLowerCase(Locale.ROOT);
        SchemaHandling handling = switch (value) {
            case "validate" -> SchemaHandling.VALIDATE;
            case "migrate", "create" -> SchemaHandling.MIGRATE;
            case "none" -> SchemaHandling.NONE;
            default -> throw invalid(Setting.SCHEMA.key(), value, "must be validate, migrate, create or none");
        };
        if (values.bool(Setting.CREATE_SCHEMA)) {
            if (source.get(Setting.SCHEMA.key()).isPresent() && handling != SchemaHandling.MIGRATE) {
                throw invalid(Setting.CREATE_SCHEMA.key(), "true", "means " + Setting.SCHEMA.key() + "=migrate, and "
                        + Setting.SCHEMA.key() + " is " + value + ": remove one of them");
            }
            return SchemaHandling.MIGRATE;
        }
        return handling;
    }

    /** Whether leases and expiry use the database's time (the default) rather than the JVM's. */
    public boolean usesDatabaseClock() {
        String value = values.raw(Setting.CLOCK).toLowerCase(Locale.ROOT);
        return switch (value) {
            case "database" -> true;
            case "jvm" -> false;
            default -> throw invalid(Setting.CLOCK.key(), value, "must be database or jvm");
        };
    }

    public int interceptorPriority() {
        return intValue(Setting.INTERCEPTOR_PRIORITY, values.raw(Setting.INTERCEPTOR_PRIORITY));
    }

    public boolean anonymousAllowed() {
        String value = values.raw(Setting.ANONYMOUS).toLowerCase(Locale.ROOT);
        return switch (value) {
            case "reject" -> false;
            case "allow" -> true;
            default -> throw invalid(Setting.ANONYMOUS.key(), value, "must be reject or allow");
        };
    }

    /** The default ScopeResolver's tenant source: {@code constant:<value>} or {@code header:<name>}. */
    public TenantSource tenantSource() {
        String value = values.raw(Setting.TENANT);
        if (value.startsWith("constant:")) {
            return new TenantSource(false, value.substring("constant:".length()));
        }
        if (value.startsWith("header:") && value.length() > "header:".length()) {
            return new TenantSource(true, value.substring("header:".length()));
        }
        throw invalid(Setting.TENANT.key(), value, "must be constant:<value> or header:<name>");
    }

    /** Where the tenant comes from: a constant, or a header set by a trusted gateway. */
    public record TenantSource(boolean fromHeader, String value) {
    }

    /** Where Redis is, for the fast replay path; empty when none is configured. */
    public Optional<dev.idempotency.redis.RedisAddress> redisAddress() {
        String url = values.raw(Setting.REDIS_URL).trim();
        if (url.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(dev.idempotency.redis.RedisAddress.parse(url));
        } catch (IllegalArgumentException e) {
            // The value may hold a password: the error names what is wrong, not the value.
            throw invalid(Setting.REDIS_URL.key(), "(not shown)", e.getMessage());
        }
    }

    public Duration redisTimeout() {
        Duration timeout = duration(Setting.REDIS_TIMEOUT.key(), values.raw(Setting.REDIS_TIMEOUT));
        if (timeout.isNegative() || timeout.isZero() || timeout.compareTo(Duration.ofSeconds(5)) > 0) {
            throw invalid(Setting.REDIS_TIMEOUT.key(), values.raw(Setting.REDIS_TIMEOUT), "must be positive and at most PT5S");
        }
        return timeout;
    }

    public int maxWaiters() {
        return intValue(Setting.IN_FLIGHT_MAX_WAITERS, values.raw(Setting.IN_FLIGHT_MAX_WAITERS));
    }

    public int maxRequestBytes() {
        return intValue(Setting.MAX_REQUEST_BYTES, values.raw(Setting.MAX_REQUEST_BYTES));
    }

    public int purgeBatchSize() {
        return intValue(Setting.PURGE_BATCH_SIZE, values.raw(Setting.PURGE_BATCH_SIZE));
    }

    /** Zero disables the scheduled purge. */
    public Duration purgeInterval() {
        return values.notNegative(Setting.PURGE_INTERVAL);
    }

    /** Zero disables the scheduled settling of stuck operations. */
    public Duration settleInterval() {
        return values.notNegative(Setting.SETTLE_INTERVAL);
    }

    public Duration settleAfter() {
        return values.notNegative(Setting.SETTLE_AFTER);
    }

    /** Zero disables the scheduled runs of accepted operations whose node died (docs/adr/0020). */
    public Duration settleAcceptedInterval() {
        return values.notNegative(Setting.SETTLE_ACCEPTED_INTERVAL);
    }

    public int settleAcceptedMaxAttempts() {
        return positive(Setting.SETTLE_ACCEPTED_MAX_ATTEMPTS, values.raw(Setting.SETTLE_ACCEPTED_MAX_ATTEMPTS));
    }

    public Duration settleLookBack() {
        return values.notNegative(Setting.SETTLE_LOOK_BACK);
    }


    /** The role a caller of the admin resource must have. */
    public String adminRole() {
        String role = values.raw(Setting.ADMIN_ROLE).trim();
        if (role.isEmpty()) {
            throw invalid(Setting.ADMIN_ROLE.key(), role, "must name a role");
        }
        return role;
    }

    public String problemBase() {
        String base = values.raw(Setting.PROBLEM_BASE);
        if (!base.endsWith("/") && !base.endsWith("#") && !base.endsWith(":")) {
            throw invalid(Setting.PROBLEM_BASE.key(), base, "must end with '/', '#' or ':'");
        }
        try {
            java.net.URI.create(base);
        } catch (IllegalArgumentException e) {
            throw invalid(Setting.PROBLEM_BASE.key(), base, "is not a URI");
        }
        return base;
    }

    /** The property a message listener's key is read from when {@code keyName} is left empty. */
    public static final String DEFAULT_KEY_PROPERTY = EndpointSettings.DEFAULT_KEY_PROPERTY;

    /**
     * The resolved policy of a resource method's endpoint.
     *
     * @throws IdempotencyDefinitionException when a value (annotation or configuration) is invalid
     */
    public EndpointPolicy policyFor(String endpoint, Idempotent annotation) {
        return endpoints.policyFor(endpoint, annotation, false);
    }

    /**
     * The policy of an endpoint; {@code consumesMessages} for a message listener, whose key comes from the message,
     * which always waits for an in-flight duplicate, and whose caller limits apply only where they are set for it.
     */
    public EndpointPolicy policyFor(String endpoint, Idempotent annotation, boolean consumesMessages) {
        return endpoints.policyFor(endpoint, annotation, consumesMessages);
    }

    /** The policy of an idempotent CDI business method, whose key is its {@code @IdempotencyKey} argument. */
    public EndpointPolicy policyForCall(String endpoint, Idempotent annotation) {
        return endpoints.policyForCall(endpoint, annotation);
    }

    /** Where the tenant and principal of a business method's calls come from ({@code call.*}). */
    public CallScopeResolver.Sources callSources(String endpoint) {
        return endpoints.callSources(endpoint);
    }
}
