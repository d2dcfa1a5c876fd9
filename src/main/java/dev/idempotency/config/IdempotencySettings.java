package dev.idempotency.config;

import dev.idempotency.ClaimMode;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyDefinitionException;
import dev.idempotency.InFlightPolicy;
import dev.idempotency.KeySource;
import dev.idempotency.ResponseStorage;
import dev.idempotency.core.ApiVersionSource;
import dev.idempotency.core.FingerprintRules;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.core.KeyRules;
import dev.idempotency.core.MessagePolicy;
import dev.idempotency.core.ScopeSource;
import dev.idempotency.core.CallScopeResolver;
import dev.idempotency.core.Redaction;
import dev.idempotency.json.JacksonCanonicalJson;
import dev.idempotency.json.JsonRedactor;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The library's configuration, read and validated once at start-up. For a per-endpoint setting the
 * most specific value wins: {@code idempotency.endpoints.<endpoint>.<name>}, then the annotation member,
 * then {@code idempotency.<name>}, then the built-in default. Every invalid value is reported with its
 * key (message id {@code IDEM-C001}) and fails the deployment.
 */
public final class IdempotencySettings {
    /** Publicly known: only for {@code idempotency.insecure-development-secret=true}. */
    static final String DEVELOPMENT_SECRET = "idempotency-cdi insecure development secret, never use in production";

    private final SettingsSource source;
    private final byte[] secret;
    private final List<byte[]> previousSecrets;
    private final boolean developmentSecret;
    private final KeyRules keyRules;
    private final Map<String, byte[]> encryptionKeys;
    private final String activeEncryptionKey;

    public IdempotencySettings(SettingsSource source) {
        this.source = source;
        this.developmentSecret = bool(Setting.INSECURE_DEVELOPMENT_SECRET);
        Optional<String> configured = source.get(Setting.SECRET.key());
        if (configured.isEmpty() && !developmentSecret) {
            throw new IdempotencyDefinitionException("IDEM-C002 " + Setting.SECRET.key()
                    + " is not set: the request fingerprint needs a server secret of at least 32 bytes. Set it"
                    + " (server property, environment variable IDEMPOTENCY_SECRET or MicroProfile Config), or set "
                    + Setting.INSECURE_DEVELOPMENT_SECRET.key() + "=true for development only.");
        }
        this.secret = utf8AtLeast32(Setting.SECRET.key(), configured.orElse(DEVELOPMENT_SECRET));
        this.previousSecrets = new ArrayList<>();
        for (String previous : list(Setting.PREVIOUS_SECRETS)) {
            previousSecrets.add(utf8AtLeast32(Setting.PREVIOUS_SECRETS.key(), previous));
        }
        this.keyRules = keyRules();
        this.encryptionKeys = encryptionKeys();
        String active = raw(Setting.ENCRYPTION_ACTIVE_KEY);
        if (!active.isEmpty() && !encryptionKeys.containsKey(active)) {
            throw invalid(Setting.ENCRYPTION_ACTIVE_KEY.key(), active, "names no key of " + Setting.ENCRYPTION_KEYS.key());
        }
        if (active.isEmpty() && !encryptionKeys.isEmpty()) {
            throw invalid(Setting.ENCRYPTION_ACTIVE_KEY.key(), "", "must name one of the configured encryption keys");
        }
        this.activeEncryptionKey = active.isEmpty() ? null : active;
        // Validate the remaining global values now, so a typo fails start-up and not the first request.
        datasource();
        table();
        bool(Setting.CREATE_SCHEMA);
        usesDatabaseClock();
        interceptorPriority();
        anonymousAllowed();
        tenantSource();
        adminRole();
        positive(Setting.IN_FLIGHT_MAX_WAITERS, raw(Setting.IN_FLIGHT_MAX_WAITERS));
        positive(Setting.MAX_REQUEST_BYTES, raw(Setting.MAX_REQUEST_BYTES));
        positive(Setting.PURGE_BATCH_SIZE, raw(Setting.PURGE_BATCH_SIZE));
        purgeInterval();
        settleInterval();
        settleAfter();
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
        int min = intValue(Setting.KEY_MIN_LENGTH, raw(Setting.KEY_MIN_LENGTH));
        int max = intValue(Setting.KEY_MAX_LENGTH, raw(Setting.KEY_MAX_LENGTH));
        if (min < 1 || max < min || max > 1024) {
            throw invalid(Setting.KEY_MAX_LENGTH.key(), min + ".." + max, "key lengths must satisfy 1 <= min <= max <= 1024");
        }
        String pattern = raw(Setting.KEY_PATTERN);
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
        for (String entry : list(Setting.ENCRYPTION_KEYS)) {
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
        return raw(Setting.DATASOURCE);
    }

    public String table() {
        String table = raw(Setting.TABLE);
        if (!table.matches("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,62}")) {
            throw invalid(Setting.TABLE.key(), table, "must be an SQL identifier, optionally schema-qualified");
        }
        return table;
    }

    public boolean createSchema() {
        return bool(Setting.CREATE_SCHEMA);
    }

    /** Whether leases and expiry use the database's time (the default) rather than the JVM's. */
    public boolean usesDatabaseClock() {
        String value = raw(Setting.CLOCK).toLowerCase(Locale.ROOT);
        return switch (value) {
            case "database" -> true;
            case "jvm" -> false;
            default -> throw invalid(Setting.CLOCK.key(), value, "must be database or jvm");
        };
    }

    public int interceptorPriority() {
        return intValue(Setting.INTERCEPTOR_PRIORITY, raw(Setting.INTERCEPTOR_PRIORITY));
    }

    public boolean anonymousAllowed() {
        String value = raw(Setting.ANONYMOUS).toLowerCase(Locale.ROOT);
        return switch (value) {
            case "reject" -> false;
            case "allow" -> true;
            default -> throw invalid(Setting.ANONYMOUS.key(), value, "must be reject or allow");
        };
    }

    /** The default ScopeResolver's tenant source: {@code constant:<value>} or {@code header:<name>}. */
    public TenantSource tenantSource() {
        String value = raw(Setting.TENANT);
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
        String url = raw(Setting.REDIS_URL).trim();
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
        Duration timeout = duration(Setting.REDIS_TIMEOUT.key(), raw(Setting.REDIS_TIMEOUT));
        if (timeout.isNegative() || timeout.isZero() || timeout.compareTo(Duration.ofSeconds(5)) > 0) {
            throw invalid(Setting.REDIS_TIMEOUT.key(), raw(Setting.REDIS_TIMEOUT), "must be positive and at most PT5S");
        }
        return timeout;
    }

    public int maxWaiters() {
        return intValue(Setting.IN_FLIGHT_MAX_WAITERS, raw(Setting.IN_FLIGHT_MAX_WAITERS));
    }

    public int maxRequestBytes() {
        return intValue(Setting.MAX_REQUEST_BYTES, raw(Setting.MAX_REQUEST_BYTES));
    }

    public int purgeBatchSize() {
        return intValue(Setting.PURGE_BATCH_SIZE, raw(Setting.PURGE_BATCH_SIZE));
    }

    /** Zero disables the scheduled purge. */
    public Duration purgeInterval() {
        return notNegative(Setting.PURGE_INTERVAL);
    }

    /** Zero disables the scheduled settling of stuck operations. */
    public Duration settleInterval() {
        return notNegative(Setting.SETTLE_INTERVAL);
    }

    public Duration settleAfter() {
        return notNegative(Setting.SETTLE_AFTER);
    }

    public Duration settleLookBack() {
        return notNegative(Setting.SETTLE_LOOK_BACK);
    }

    private Duration notNegative(Setting setting) {
        Duration value = duration(setting.key(), raw(setting));
        if (value.isNegative()) {
            throw invalid(setting.key(), raw(setting), "must not be negative");
        }
        return value;
    }

    /** The role a caller of the admin resource must have. */
    public String adminRole() {
        String role = raw(Setting.ADMIN_ROLE).trim();
        if (role.isEmpty()) {
            throw invalid(Setting.ADMIN_ROLE.key(), role, "must name a role");
        }
        return role;
    }

    public String problemBase() {
        String base = raw(Setting.PROBLEM_BASE);
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

    /** The API version source of an endpoint: {@code header:<name>}, {@code path-segment:<n>} or none. */
    private ApiVersionSource apiVersionSource(Setting setting, String endpoint, String value) {
        try {
            return ApiVersionSource.parse(value);
        } catch (IllegalArgumentException e) {
            throw invalid(keyOf(setting, endpoint), value, e.getMessage());
        }
    }

    /**
     * The endpoint's resolved policy.
     *
     * @throws IdempotencyDefinitionException when a value (annotation or configuration) is invalid
     */
    /** The property a message listener's key is read from when {@code keyName} is left empty. */
    public static final String DEFAULT_KEY_PROPERTY = "IdempotencyKey";

    public EndpointPolicy policyFor(String endpoint, Idempotent annotation) {
        return policyFor(endpoint, annotation, false);
    }

    /**
     * The policy of an endpoint; {@code consumesMessages} for a message listener, whose key comes from the message
     * ({@link KeySource#MESSAGE_PROPERTY}, {@link KeySource#BODY_FIELD} or {@link KeySource#MESSAGE_ID}), which
     * always waits for an in-flight duplicate, and whose caller limits apply only where they are set for it (its
     * principal is a constant or a producer's property, not a client).
     */
    public EndpointPolicy policyFor(String endpoint, Idempotent annotation, boolean consumesMessages) {
        return policyFor(endpoint, annotation, consumesMessages ? Origin.MESSAGE : Origin.REQUEST);
    }

    /**
     * The policy of an idempotent CDI business method, whose key is its {@code @IdempotencyKey} argument
     * ({@link KeySource#PARAMETER}) and whose caller limits, as a message listener's, apply only where they are set
     * for it (its principal is often one constant for every call).
     */
    public EndpointPolicy policyForCall(String endpoint, Idempotent annotation) {
        return policyFor(endpoint, annotation, Origin.CALL);
    }

    /** Where the tenant and principal of a business method's calls come from ({@code call.*}). */
    public CallScopeResolver.Sources callSources(String endpoint) {
        String why = "a call has no properties: constant:<value> or caller";
        return new CallScopeResolver.Sources(scopeSource(Setting.CALL_TENANT, endpoint, ScopeSource.Kind.PROPERTY, why),
                scopeSource(Setting.CALL_PRINCIPAL, endpoint, ScopeSource.Kind.PROPERTY, why));
    }

    /** What an endpoint's operations come from, which decides where its key and scope can be found. */
    private enum Origin {
        REQUEST, MESSAGE, CALL
    }

    private EndpointPolicy policyFor(String endpoint, Idempotent annotation, Origin origin) {
        boolean consumesMessages = origin == Origin.MESSAGE;
        KeySource keySource = annotation.keySource();
        if (origin == Origin.CALL) {
            if (keySource != KeySource.HEADER && keySource != KeySource.PARAMETER) {
                throw new IdempotencyDefinitionException("IDEM-D017 endpoint '" + endpoint + "' is a business method,"
                        + " whose key is its @IdempotencyKey parameter: leave keySource out (or set PARAMETER)");
            }
            keySource = KeySource.PARAMETER;
        } else if (keySource == KeySource.PARAMETER) {
            throw new IdempotencyDefinitionException("IDEM-D017 endpoint '" + endpoint + "' takes its key from an"
                    + " @IdempotencyKey parameter but is a " + (consumesMessages ? "message listener" : "resource method"));
        }
        boolean messageKey = keySource == KeySource.MESSAGE_PROPERTY || keySource == KeySource.MESSAGE_ID;
        if (consumesMessages && keySource == KeySource.HEADER) {
            throw new IdempotencyDefinitionException("IDEM-D015 endpoint '" + endpoint + "' consumes messages, which"
                    + " have no headers: take its key with keySource = MESSAGE_PROPERTY (a property the producer sets"
                    + " to the business key), BODY_FIELD (a field of the message's JSON) or MESSAGE_ID");
        }
        if (!consumesMessages && messageKey) {
            throw new IdempotencyDefinitionException("IDEM-D015 endpoint '" + endpoint + "' takes its key from a"
                    + " message (" + keySource + ") but is not a message listener (onMessage(jakarta.jms.Message))");
        }
        String keyName = annotation.keyName();
        if (keySource == KeySource.HEADER && keyName.isEmpty()) {
            keyName = endpointRaw(Setting.KEY_HEADER, endpoint, null);
        }
        if (keySource == KeySource.MESSAGE_PROPERTY && keyName.isEmpty()) {
            keyName = DEFAULT_KEY_PROPERTY;
        }
        if (keySource == KeySource.MESSAGE_ID) {
            keyName = dev.idempotency.core.MessageFacts.MESSAGE_ID;
        }
        if (keySource == KeySource.PARAMETER) {
            keyName = dev.idempotency.core.CallFacts.KEY;
        }
        if (annotation.keySource() == KeySource.BODY_FIELD && keyName.isEmpty()) {
            throw new IdempotencyDefinitionException("IDEM-D004 @Idempotent(keySource = BODY_FIELD) on endpoint '"
                    + endpoint + "' needs keyName, the body field holding the key");
        }
        Duration retention = durationSetting(Setting.RETENTION, endpoint, annotation.retention());
        Duration lease = durationSetting(Setting.LEASE, endpoint, annotation.lease());
        Duration wait = durationSetting(Setting.IN_FLIGHT_WAIT, endpoint, null);
        if (wait.compareTo(Duration.ofSeconds(30)) > 0) {
            throw invalid(keyOf(Setting.IN_FLIGHT_WAIT, endpoint), wait.toString(), "must be at most PT30S");
        }
        Duration retryAfterMax = durationSetting(Setting.RETRY_AFTER_MAX, endpoint, null);
        // An asynchronous endpoint's first answer is a 202 already: a duplicate gets the same.
        // A message's consumer thread waits (bounded) where a request's client would be told to come back.
        InFlightPolicy inFlight = annotation.asynchronous() ? InFlightPolicy.ACCEPTED
                : consumesMessages ? InFlightPolicy.WAIT : inFlight(endpoint, annotation.inFlight());
        ResponseStorage storage = storage(endpoint, annotation.storage());
        if (storage == ResponseStorage.ENCRYPTED && activeEncryptionKey == null) {
            throw new IdempotencyDefinitionException("IDEM-C003 endpoint '" + endpoint + "' stores responses encrypted,"
                    + " but " + Setting.ENCRYPTION_KEYS.key() + " / " + Setting.ENCRYPTION_ACTIVE_KEY.key() + " are not set");
        }
        String mismatch = endpointRaw(Setting.MISMATCH_STATUS, endpoint, null);
        if (!mismatch.equals("422") && !mismatch.equals("409")) {
            throw invalid(keyOf(Setting.MISMATCH_STATUS, endpoint), mismatch, "must be 422 or 409");
        }
        FingerprintRules rules = new FingerprintRules(ignoredFields(Setting.FINGERPRINT_IGNORE, endpoint,
                endpointRaw(Setting.FINGERPRINT_IGNORE, endpoint, null)), fieldDefaults(Setting.FINGERPRINT_DEFAULTS,
                endpoint, endpointRaw(Setting.FINGERPRINT_DEFAULTS, endpoint, null)), queryIncluded(
                Setting.FINGERPRINT_QUERY, endpoint, endpointRaw(Setting.FINGERPRINT_QUERY, endpoint, null)),
                apiVersionSource(Setting.API_VERSION, endpoint, endpointRaw(Setting.API_VERSION, endpoint, null)));
        Optional<FingerprintRules> previousRules = previousRules(endpoint, rules);
        Optional<Instant> previousUntil = configured(Setting.FINGERPRINT_PREVIOUS_UNTIL, endpoint)
                .filter(value -> !value.isBlank()).map(value -> instant(keyOf(Setting.FINGERPRINT_PREVIOUS_UNTIL,
                        endpoint), value));
        List<String> redacted = splitList(endpointRaw(Setting.REDACT_FIELDS, endpoint, null));
        try {
            JsonRedactor.validate(redacted);
        } catch (IllegalArgumentException e) {
            throw invalid(keyOf(Setting.REDACT_FIELDS, endpoint), String.join(",", redacted), e.getMessage());
        }
        String oversize = endpointRaw(Setting.OVERSIZE_RESPONSE, endpoint, null);
        if (!oversize.equals("omit-body") && !oversize.equals("fail")) {
            throw invalid(keyOf(Setting.OVERSIZE_RESPONSE, endpoint), oversize, "must be omit-body or fail");
        }
        String redactMode = endpointRaw(Setting.REDACT_MODE, endpoint, null);
        if (!redactMode.equals("mask") && !redactMode.equals("remove")) {
            throw invalid(keyOf(Setting.REDACT_MODE, endpoint), redactMode, "must be mask or remove");
        }
        Redaction redaction = new Redaction(redacted,
                redactMode.equals("mask") ? Redaction.Mode.MASK : Redaction.Mode.REMOVE);
        List<String> replayed = splitList(endpointRaw(Setting.REPLAYED_HEADERS, endpoint, null));
        for (String header : replayed) {
            if (header.equalsIgnoreCase("Set-Cookie") || header.equalsIgnoreCase("Authorization")
                    || header.equalsIgnoreCase("WWW-Authenticate") || header.equalsIgnoreCase("Proxy-Authenticate")) {
                throw invalid(keyOf(Setting.REPLAYED_HEADERS, endpoint), header, "credentials are never stored");
            }
        }
        Optional<MessagePolicy> messages = consumesMessages ? Optional.of(messagePolicy(endpoint)) : Optional.empty();
        // A global claim=in-transaction applies where it can: message listeners, business methods and asynchronous
        // endpoints keep their own claim; an endpoint that asks for it where it cannot be is refused.
        boolean explicitlyInTransaction = annotation.claim() == ClaimMode.IN_TRANSACTION
                || source.get(Setting.CLAIM.key(endpoint)).map(v -> v.equalsIgnoreCase("in-transaction")).orElse(false);
        boolean claimInTransaction = claimInTransaction(endpoint, annotation.claim());
        boolean cannotJoin = origin != Origin.REQUEST || annotation.asynchronous() || inFlight == InFlightPolicy.ACCEPTED;
        if (claimInTransaction && cannotJoin) {
            if (explicitlyInTransaction) {
                throw new IdempotencyDefinitionException("IDEM-D019 endpoint '" + endpoint + "' claims in the business"
                        + " transaction (claim = IN_TRANSACTION), where nothing is visible until it commits: that does not"
                        + " go with " + (origin == Origin.MESSAGE ? "a message listener" : origin == Origin.CALL
                        ? "a business method" : annotation.asynchronous() ? "asynchronous = true"
                        : "in-flight = accepted (202 and the status resource)") + "; use claim = OWN_TRANSACTION");
            }
            claimInTransaction = false;
        }
        boolean limitsOnlyWhereSet = origin != Origin.REQUEST;
        int maxInFlight = limitsOnlyWhereSet ? setForEndpointOnly(Setting.MAX_IN_FLIGHT_PER_PRINCIPAL, endpoint)
                : nonNegative(Setting.MAX_IN_FLIGHT_PER_PRINCIPAL, endpoint);
        int maxKeys = limitsOnlyWhereSet ? setForEndpointOnly(Setting.MAX_KEYS_PER_ENDPOINT, endpoint)
                : nonNegative(Setting.MAX_KEYS_PER_ENDPOINT, endpoint);
        return new EndpointPolicy(endpoint, keySource, keyName, annotation.keyRequired(), retention, lease,
                inFlight, wait, storage, annotation.replayWith(), Arrays.asList(annotation.finalOn()),
                Arrays.asList(annotation.retryOn()), annotation.externalSideEffects(), Integer.parseInt(mismatch),
                rules.ignoredFields(), rules.defaults(), maxInFlight, maxKeys,
                positive(keyOf(Setting.MAX_RESPONSE_BYTES, endpoint), endpointRaw(Setting.MAX_RESPONSE_BYTES, endpoint, null)),
                replayed, retryAfterMax, rules.apiVersion(), endpointRaw(Setting.STATUS_PATH, endpoint, null),
                rules.query(), redaction, oversize.equals("fail"), previousRules, previousUntil, annotation.asynchronous(),
                messages, claimInTransaction, cacheOutcomes(endpoint));
    }

    // Only where Redis is configured: an endpoint's own false turns it off there.
    private boolean cacheOutcomes(String endpoint) {
        if (raw(Setting.REDIS_URL).isBlank()) {
            return false;
        }
        String value = endpointRaw(Setting.REDIS, endpoint, null).trim().toLowerCase(Locale.ROOT);
        if (!value.equals("true") && !value.equals("false")) {
            throw invalid(keyOf(Setting.REDIS, endpoint), value, "must be true or false");
        }
        return value.equals("true");
    }

    private boolean claimInTransaction(String endpoint, ClaimMode annotated) {
        Optional<String> specific = source.get(Setting.CLAIM.key(endpoint));
        if (specific.isEmpty() && annotated != ClaimMode.CONFIGURED) {
            return annotated == ClaimMode.IN_TRANSACTION;
        }
        String value = specific.orElseGet(() -> raw(Setting.CLAIM)).toLowerCase(Locale.ROOT);
        return switch (value) {
            case "own-transaction" -> false;
            case "in-transaction" -> true;
            default -> throw invalid(specific.isPresent() ? Setting.CLAIM.key(endpoint) : Setting.CLAIM.key(),
                    value, "must be own-transaction or in-transaction");
        };
    }

    private MessagePolicy messagePolicy(String endpoint) {
        String why = "a message has no authenticated caller: constant:<value> or property:<name>";
        ScopeSource tenant = scopeSource(Setting.MESSAGE_TENANT, endpoint, ScopeSource.Kind.CALLER, why);
        ScopeSource principal = scopeSource(Setting.MESSAGE_PRINCIPAL, endpoint, ScopeSource.Kind.CALLER, why);
        List<String> properties = splitList(endpointRaw(Setting.MESSAGE_FINGERPRINT_PROPERTIES, endpoint, null));
        String deliveries = endpointRaw(Setting.MESSAGE_MAX_DELIVERIES, endpoint, null);
        return new MessagePolicy(tenant, principal, properties,
                positive(keyOf(Setting.MESSAGE_MAX_DELIVERIES, endpoint), deliveries));
    }

    // A source of one of the forms its operations have (a message has no caller, a call no properties).
    private ScopeSource scopeSource(Setting setting, String endpoint, ScopeSource.Kind refused, String why) {
        String value = endpointRaw(setting, endpoint, null);
        ScopeSource source;
        try {
            source = ScopeSource.parse(value);
        } catch (IllegalArgumentException e) {
            throw invalid(keyOf(setting, endpoint), value, e.getMessage());
        }
        if (source.kind() == refused) {
            throw invalid(keyOf(setting, endpoint), value, why);
        }
        return source;
    }

    // A limit set for this endpoint by name; otherwise none (0).
    private int setForEndpointOnly(Setting setting, String endpoint) {
        return source.get(setting.key(endpoint)).isPresent() ? nonNegative(setting, endpoint) : 0;
    }

    // The rules accepted besides the current ones: each previous.* setting configured, the current value otherwise.
    private Optional<FingerprintRules> previousRules(String endpoint, FingerprintRules current) {
        Optional<String> ignore = configured(Setting.FINGERPRINT_PREVIOUS_IGNORE, endpoint);
        Optional<String> defaults = configured(Setting.FINGERPRINT_PREVIOUS_DEFAULTS, endpoint);
        Optional<String> query = configured(Setting.FINGERPRINT_PREVIOUS_QUERY, endpoint);
        Optional<String> apiVersion = configured(Setting.FINGERPRINT_PREVIOUS_API_VERSION, endpoint);
        if (ignore.isEmpty() && defaults.isEmpty() && query.isEmpty() && apiVersion.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new FingerprintRules(
                ignore.map(v -> ignoredFields(Setting.FINGERPRINT_PREVIOUS_IGNORE, endpoint, v))
                        .orElse(current.ignoredFields()),
                defaults.map(v -> fieldDefaults(Setting.FINGERPRINT_PREVIOUS_DEFAULTS, endpoint, v))
                        .orElse(current.defaults()),
                query.map(v -> queryIncluded(Setting.FINGERPRINT_PREVIOUS_QUERY, endpoint, v)).orElse(current.query()),
                apiVersion.map(v -> apiVersionSource(Setting.FINGERPRINT_PREVIOUS_API_VERSION, endpoint, v))
                        .orElse(current.apiVersion())));
    }

    // A setting configured for the endpoint or globally, without falling back to its default.
    private Optional<String> configured(Setting setting, String endpoint) {
        return source.get(setting.key(endpoint)).or(() -> source.get(setting.key()));
    }

    private Set<String> ignoredFields(Setting setting, String endpoint, String raw) {
        Set<String> ignored = new LinkedHashSet<>(splitList(raw));
        try {
            JacksonCanonicalJson.validateIgnored(ignored);
        } catch (IllegalArgumentException e) {
            throw invalid(keyOf(setting, endpoint), String.join(",", ignored), e.getMessage());
        }
        return ignored;
    }

    private boolean queryIncluded(Setting setting, String endpoint, String value) {
        if (!value.equals("include") && !value.equals("ignore")) {
            throw invalid(keyOf(setting, endpoint), value, "must be include or ignore");
        }
        return value.equals("include");
    }

    private Instant instant(String key, String value) {
        try {
            return Instant.parse(value.trim());
        } catch (java.time.format.DateTimeParseException e) {
            throw invalid(key, value, "must be an ISO-8601 instant such as 2026-12-31T23:00:00Z");
        }
    }

    private Map<String, String> fieldDefaults(Setting setting, String endpoint, String raw) {
        Map<String, String> defaults = new LinkedHashMap<>();
        for (String entry : raw.split(";")) {
            if (entry.isBlank()) {
                continue;
            }
            int eq = entry.indexOf('=');
            if (eq <= 0) {
                throw invalid(keyOf(setting, endpoint), raw, "entries must be path=<json>");
            }
            defaults.put(entry.substring(0, eq).trim(), entry.substring(eq + 1).trim());
        }
        try {
            JacksonCanonicalJson.validateDefaults(defaults);
        } catch (IllegalArgumentException e) {
            throw invalid(keyOf(setting, endpoint), "(see message)", e.getMessage());
        }
        return defaults;
    }

    private InFlightPolicy inFlight(String endpoint, InFlightPolicy annotated) {
        Optional<String> specific = source.get(Setting.IN_FLIGHT.key(endpoint));
        if (specific.isEmpty() && annotated != InFlightPolicy.CONFIGURED) {
            return annotated;
        }
        String value = specific.orElseGet(() -> raw(Setting.IN_FLIGHT)).toLowerCase(Locale.ROOT);
        return switch (value) {
            case "conflict" -> InFlightPolicy.CONFLICT;
            case "too-early" -> InFlightPolicy.TOO_EARLY;
            case "accepted" -> InFlightPolicy.ACCEPTED;
            case "wait" -> InFlightPolicy.WAIT;
            default -> throw invalid(specific.isPresent() ? Setting.IN_FLIGHT.key(endpoint) : Setting.IN_FLIGHT.key(),
                    value, "must be conflict, too-early, accepted or wait");
        };
    }

    private ResponseStorage storage(String endpoint, ResponseStorage annotated) {
        Optional<String> specific = source.get(Setting.STORAGE.key(endpoint));
        if (specific.isEmpty() && annotated != ResponseStorage.CONFIGURED) {
            return annotated;
        }
        String value = specific.orElseGet(() -> raw(Setting.STORAGE)).toLowerCase(Locale.ROOT);
        return switch (value) {
            case "full" -> ResponseStorage.FULL;
            case "encrypted" -> ResponseStorage.ENCRYPTED;
            case "minimal" -> ResponseStorage.MINIMAL;
            default -> throw invalid(specific.isPresent() ? Setting.STORAGE.key(endpoint) : Setting.STORAGE.key(),
                    value, "must be full, encrypted or minimal");
        };
    }

    private Duration durationSetting(Setting setting, String endpoint, String annotated) {
        Optional<String> specific = source.get(setting.key(endpoint));
        String key = specific.isPresent() ? setting.key(endpoint)
                : annotated != null && !annotated.isEmpty() ? "@Idempotent(" + setting.settingName() + ") of " + endpoint
                : setting.key();
        String value = endpointRaw(setting, endpoint, annotated);
        Duration duration = duration(key, value);
        if (duration.isNegative() || duration.isZero()) {
            throw invalid(key, value, "must be a positive duration");
        }
        return duration;
    }

    // The key a per-endpoint value was read from, so that an error names the line to fix.
    private String keyOf(Setting setting, String endpoint) {
        return source.get(setting.key(endpoint)).isPresent() ? setting.key(endpoint) : setting.key();
    }

    // Endpoint configuration, then the annotation's value (when given), then the global key, then the default.
    private String endpointRaw(Setting setting, String endpoint, String annotated) {
        return source.get(setting.key(endpoint))
                .orElseGet(() -> annotated != null && !annotated.isEmpty() ? annotated : raw(setting));
    }

    private int nonNegative(Setting setting, String endpoint) {
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

    private static int positive(Setting setting, String value) {
        return positive(setting.key(), value);
    }

    private static int positive(String key, String value) {
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

    private static int intValue(Setting setting, String value) {
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw invalid(setting.key(), value, "must be an integer");
        }
    }

    private static Duration duration(String key, String value) {
        try {
            return Duration.parse(value.trim());
        } catch (DateTimeParseException e) {
            throw invalid(key, value, "must be an ISO-8601 duration such as PT30S or P1D");
        }
    }

    private boolean bool(Setting setting) {
        String value = raw(setting).toLowerCase(Locale.ROOT);
        if (!value.equals("true") && !value.equals("false")) {
            throw invalid(setting.key(), value, "must be true or false");
        }
        return value.equals("true");
    }

    private String raw(Setting setting) {
        return source.get(setting.key()).orElse(setting.defaultValue() == null ? "" : setting.defaultValue());
    }

    private List<String> list(Setting setting) {
        return splitList(raw(setting));
    }

    private static List<String> splitList(String raw) {
        List<String> out = new ArrayList<>();
        for (String part : raw.split(",")) {
            if (!part.isBlank()) {
                out.add(part.trim());
            }
        }
        return out;
    }

    private static byte[] utf8AtLeast32(String key, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        if (bytes.length < 32) {
            throw invalid(key, "(hidden)", "must be at least 32 bytes");
        }
        return bytes;
    }

    private static IdempotencyDefinitionException invalid(String key, String value, String why) {
        return new IdempotencyDefinitionException("IDEM-C001 invalid configuration " + key + "='" + value + "': " + why);
    }
}
