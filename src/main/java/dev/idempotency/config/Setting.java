package dev.idempotency.config;

/**
 * Every configuration key, its default and whether an endpoint may override it
 * ({@code idempotency.endpoints.<endpoint>.<name>}). The README's configuration table lists exactly
 * these (a test keeps them in step).
 */
public enum Setting {
    SECRET("secret", null, false, "HMAC secret for request fingerprints, at least 32 bytes (UTF-8). Required."),
    PREVIOUS_SECRETS("previous-secrets", "", false, "Comma-separated secrets accepted besides the current one: earlier ones, or the next one during a rotation's first step."),
    INSECURE_DEVELOPMENT_SECRET("insecure-development-secret", "false", false,
            "true: run without a secret, with a fixed publicly known one. Never in production."),
    DATASOURCE("datasource", "java:comp/DefaultDataSource", false, "JNDI name of the JTA DataSource of the record table."),
    TABLE("table", "idempotency_record", false, "Name of the record table."),
    SCHEMA("schema", "validate", false,
            "The JDBC store's tables at deployment: validate (fail unless at the library's schema version, naming the scripts to run), migrate (apply the missing scripts under a database lock), create (the same as migrate) or none."),
    CREATE_SCHEMA("create-schema", "false", false, "true: the same as schema=migrate (the setting of earlier releases)."),
    CLOCK("clock", "database", false,
            "Time for leases and expiry: database (the record table's database, offset re-read every minute; JDBC store) or jvm."),
    INTERCEPTOR_PRIORITY("interceptor-priority", "1010", false,
            "Priority of the interceptor (LIBRARY_BEFORE + 10: inside the application's @Transactional)."),
    KEY_HEADER("key-header", "Idempotency-Key", true, "Header carrying the key (KeySource.HEADER)."),
    KEY_MIN_LENGTH("key-min-length", "1", false, "Shortest accepted key."),
    KEY_MAX_LENGTH("key-max-length", "255", false, "Longest accepted key (at most 1024)."),
    KEY_PATTERN("key-pattern", "", false, "Optional regular expression every key must match (within 0x21-0x7E)."),
    TENANT("tenant", "constant:", false, "Tenant of the default ScopeResolver: constant:<value> or header:<name>."),
    ANONYMOUS("anonymous", "reject", false, "Calls without a principal: reject (401) or allow (principal $anonymous)."),
    API_VERSION("api-version", "", true, "Where the API version is read for the fingerprint: header:<name>, path-segment:<n> or empty."),
    RETENTION("retention", "PT24H", true, "How long finished records are kept (ISO-8601)."),
    LEASE("lease", "PT30S", true, "How long a claim protects a running execution (ISO-8601)."),
    IN_FLIGHT("in-flight", "conflict", true, "Answer to an in-flight duplicate: conflict (409), too-early (425), accepted (202), wait."),
    IN_FLIGHT_WAIT("in-flight-wait", "PT2S", true, "Longest wait for in-flight=wait, and of a duplicate on an uncommitted claim of claim=in-transaction (rounded up to whole seconds there) (at most PT30S)."),
    IN_FLIGHT_MAX_WAITERS("in-flight-max-waiters", "16", false, "Most requests waiting at once for in-flight=wait, or as duplicates on an uncommitted claim of claim=in-transaction; others get 409."),
    CLAIM("claim", "own-transaction", true,
            "Where a new operation's claim is written: own-transaction (committed before the method runs: two commits, visible while it runs) or in-transaction (in the business transaction: one commit; duplicates wait for it)."),
    RETRY_AFTER_MAX("retry-after-max", "PT5S", true, "Longest Retry-After given to in-flight duplicates."),
    MISMATCH_STATUS("mismatch-status", "422", true, "Status for a key reused with a different request: 422 or 409."),
    STORAGE("storage", "full", true, "How first responses are kept: full, encrypted or minimal."),
    ENCRYPTION_KEYS("encryption.keys", "", false, "AES keys for storage=encrypted: id:base64,id:base64 (16, 24 or 32 bytes)."),
    ENCRYPTION_ACTIVE_KEY("encryption.active-key", "", false, "Id of the key new responses are sealed with."),
    MAX_RESPONSE_BYTES("max-response-bytes", "1048576", true, "Largest response body kept for replay."),
    OVERSIZE_RESPONSE("oversize-response", "omit-body", true,
            "A response over max-response-bytes: omit-body (sent whole, kept without its body: replays get status and headers, replayWith rebuilds the body) or fail (500, rolled back)."),
    MAX_REQUEST_BYTES("max-request-bytes", "1048576", false, "Largest request body accepted on an idempotent endpoint (413 beyond)."),
    REPLAYED_HEADERS("replayed-headers", "", true, "Response headers replayed besides Location and Content-Type (comma-separated)."),
    FINGERPRINT_IGNORE("fingerprint.ignore-fields", "", true, "JSON fields (dotted paths) left out of the fingerprint."),
    FINGERPRINT_QUERY("fingerprint.query", "include", true,
            "Whether the query string is part of the fingerprint: include (parameter order and encoding do not matter) or ignore."),
    FINGERPRINT_DEFAULTS("fingerprint.defaults", "", true, "Defaults applied before fingerprinting: path=<json>;path=<json>."),
    FINGERPRINT_PREVIOUS_IGNORE("fingerprint.previous.ignore-fields", "", true,
            "ignore-fields of the fingerprint rules accepted besides the current ones (those before a change of rules, or after it during its first rolling step); unset: as the current rules, and no other rules are accepted unless one previous.* setting is set."),
    FINGERPRINT_PREVIOUS_DEFAULTS("fingerprint.previous.defaults", "", true, "defaults of those accepted rules; unset: as the current rules."),
    FINGERPRINT_PREVIOUS_QUERY("fingerprint.previous.query", "", true, "query of those accepted rules; unset: as the current rules."),
    FINGERPRINT_PREVIOUS_API_VERSION("fingerprint.previous.api-version", "", true, "api-version of those accepted rules; unset: as the current rules."),
    FINGERPRINT_PREVIOUS_UNTIL("fingerprint.previous.until", "", true,
            "ISO-8601 instant after which the accepted rules are no longer accepted (empty: while configured)."),
    REDACT_FIELDS("redact-fields", "", true,
            "JSON response fields (dotted paths, name[] for every element of an array) redacted in the stored copy: replays show them redacted."),
    REDACT_MODE("redact-mode", "mask", true, "How redact-fields are redacted: mask (the value becomes \"***\") or remove."),
    MAX_IN_FLIGHT_PER_PRINCIPAL("max-in-flight-per-principal", "100", true, "Most PROCESSING operations per principal over all endpoints, checked when this endpoint claims (0: no limit)."),
    MAX_KEYS_PER_ENDPOINT("max-keys-per-endpoint", "10000", true, "Most stored keys per principal and endpoint; expired ones count until purged or removed at the limit (0: no limit)."),
    PURGE_INTERVAL("purge.interval", "PT5M", false, "How often expired records are purged (managed scheduler); PT0S disables."),
    PURGE_BATCH_SIZE("purge.batch-size", "500", false, "Records deleted per purge statement."),
    SETTLE_INTERVAL("settle.interval", "PT1M", false, "How often operations stuck in PROCESSING (lease run out, no client retrying) are settled (managed scheduler); PT0S disables."),
    SETTLE_AFTER("settle.after", "PT1M", false, "How long after its lease ran out an operation counts as stuck, so that a retrying client comes first."),
    SETTLE_LOOK_BACK("settle.look-back", "PT1H", false, "How far back a node's first settling pass looks for leases that ran out while no node ran; older stuck operations are settled when they expire."),
    SETTLE_ACCEPTED_INTERVAL("settle.accepted-interval", "PT5S", false, "How often an asynchronous endpoint's accepted operations whose node died (lease run out, PROCESSING) are run again on this node from the input their claim kept (docs/adr/0020); PT0S disables: they are given back after settle.after."),
    SETTLE_ACCEPTED_MAX_ATTEMPTS("settle.accepted-max-attempts", "3", false, "After how many attempts an accepted operation whose node died is no longer run again by another node, but given back after settle.after (an operation that kills its node each time must not take every node down)."),
    REDIS_URL("redis.url", "", false,
            "Redis that keeps finished outcomes for replays (Jedis in the WAR): redis://[user:password@]host:port[/db], rediss://..., redis-sentinel://host:port,...[/db]#master or redis-cluster://host:port,...; empty: none."),
    REDIS_TIMEOUT("redis.timeout", "PT0.05S", false, "Longest wait for Redis per command (connect, read, pool); past it the database answers."),
    REDIS("redis", "true", true, "Whether this endpoint's finished outcomes are kept in and replayed from Redis (when redis.url is set)."),
    PROBLEM_BASE("problem-base", "https://idempotency.dev/problems/", false, "Prefix of the problem type URIs."),
    MESSAGE_TENANT("message.tenant", "constant:", true, "Tenant of a message (message listeners): constant:<value> or property:<name>."),
    MESSAGE_PRINCIPAL("message.principal", "constant:$messages", true,
            "Principal of a message, which has no authenticated caller: constant:<value> or property:<name> (set by a trusted producer)."),
    MESSAGE_FINGERPRINT_PROPERTIES("message.fingerprint-properties", "", true,
            "Message properties that are part of a message's fingerprint besides its body (comma-separated)."),
    MESSAGE_MAX_DELIVERIES("message.max-deliveries", "10", true,
            "Delivery attempts the broker makes on the endpoint's destination (Artemis max-delivery-attempts, default 10): a retryable failure of the last is recorded as dead-lettered."),
    CALL_TENANT("call.tenant", "constant:", true, "Tenant of a call of an idempotent business method (an @IdempotencyKey parameter): constant:<value> or caller."),
    CALL_PRINCIPAL("call.principal", "constant:$calls", true,
            "Principal of a call of an idempotent business method: constant:<value>, or caller (the container's authenticated caller; a call without one is refused)."),
    STATUS_PATH("status-path", "idempotency", true, "Path (under the application's base URI) of the status resource, for 202 Location."),
    ADMIN_ROLE("admin.role", "idempotency-admin", false, "Role a caller of the admin resource (IdempotencyAdminResource) must have (403 otherwise).");

    /** The prefix of every key. */
    public static final String PREFIX = "idempotency.";

    private final String name;
    private final String defaultValue;
    private final boolean perEndpoint;
    private final String description;

    Setting(String name, String defaultValue, boolean perEndpoint, String description) {
        this.name = name;
        this.defaultValue = defaultValue;
        this.perEndpoint = perEndpoint;
        this.description = description;
    }

    /** The global key, {@code idempotency.<name>}. */
    public String key() {
        return PREFIX + name;
    }

    /** The endpoint key, {@code idempotency.endpoints.<endpoint>.<name>}. */
    public String key(String endpoint) {
        return PREFIX + "endpoints." + endpoint + "." + name;
    }

    public String settingName() {
        return name;
    }

    /** The built-in default, or null when the setting is required. */
    public String defaultValue() {
        return defaultValue;
    }

    public boolean perEndpoint() {
        return perEndpoint;
    }

    public String description() {
        return description;
    }
}
