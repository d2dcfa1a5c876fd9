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
import dev.idempotency.core.MessagePolicy;
import dev.idempotency.core.ScopeSource;
import dev.idempotency.core.CallScopeResolver;
import dev.idempotency.core.Redaction;
import dev.idempotency.json.JacksonCanonicalJson;
import dev.idempotency.json.JsonRedactor;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static dev.idempotency.config.SettingValues.duration;
import static dev.idempotency.config.SettingValues.invalid;
import static dev.idempotency.config.SettingValues.positive;
import static dev.idempotency.config.SettingValues.splitList;

/**
 * The policy of each endpoint, resolved once at start-up from its annotation and its settings: for a per-endpoint
 * setting the most specific value wins ({@code idempotency.endpoints.<endpoint>.<name>}, then the annotation member,
 * then {@code idempotency.<name>}, then the built-in default). One class, over 350 lines, because it is one table:
 * each of its methods reads one setting of an endpoint, and {@link #policyFor} puts them together.
 */
final class EndpointSettings {
    private final SettingsSource source;
    private final SettingValues values;
    // Whether an active encryption key is configured: storage = encrypted needs one.
    private final boolean canEncrypt;

    EndpointSettings(SettingsSource source, SettingValues values, boolean canEncrypt) {
        this.source = source;
        this.values = values;
        this.canEncrypt = canEncrypt;
    }

    /** The API version source of an endpoint: {@code header:<name>}, {@code path-segment:<n>} or none. */
    private ApiVersionSource apiVersionSource(Setting setting, String endpoint, String value) {
        try {
            return ApiVersionSource.parse(value);
        } catch (IllegalArgumentException e) {
            throw invalid(values.keyOf(setting, endpoint), value, e.getMessage());
        }
    }

    /** The property a message listener's key is read from when {@code keyName} is left empty. */
    public static final String DEFAULT_KEY_PROPERTY = "IdempotencyKey";

    EndpointPolicy policyFor(String endpoint, Idempotent annotation) {
        return policyFor(endpoint, annotation, false);
    }

    /**
     * The policy of an endpoint; {@code consumesMessages} for a message listener, whose key comes from the message
     * ({@link KeySource#MESSAGE_PROPERTY}, {@link KeySource#BODY_FIELD} or {@link KeySource#MESSAGE_ID}), which
     * always waits for an in-flight duplicate, and whose caller limits apply only where they are set for it (its
     * principal is a constant or a producer's property, not a client).
     */
    EndpointPolicy policyFor(String endpoint, Idempotent annotation, boolean consumesMessages) {
        return policyFor(endpoint, annotation, consumesMessages ? Origin.MESSAGE : Origin.REQUEST);
    }

    /**
     * The policy of an idempotent CDI business method, whose key is its {@code @IdempotencyKey} argument
     * ({@link KeySource#PARAMETER}) and whose caller limits, as a message listener's, apply only where they are set
     * for it (its principal is often one constant for every call).
     */
    EndpointPolicy policyForCall(String endpoint, Idempotent annotation) {
        return policyFor(endpoint, annotation, Origin.CALL);
    }

    /** Where the tenant and principal of a business method's calls come from ({@code call.*}). */
    CallScopeResolver.Sources callSources(String endpoint) {
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
            keyName = values.endpointRaw(Setting.KEY_HEADER, endpoint, null);
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
            throw invalid(values.keyOf(Setting.IN_FLIGHT_WAIT, endpoint), wait.toString(), "must be at most PT30S");
        }
        Duration retryAfterMax = durationSetting(Setting.RETRY_AFTER_MAX, endpoint, null);
        // An asynchronous endpoint's first answer is a 202 already: a duplicate gets the same.
        // A message's consumer thread waits (bounded) where a request's client would be told to come back.
        InFlightPolicy inFlight = annotation.asynchronous() ? InFlightPolicy.ACCEPTED
                : consumesMessages ? InFlightPolicy.WAIT : inFlight(endpoint, annotation.inFlight());
        ResponseStorage storage = storage(endpoint, annotation.storage());
        if (storage == ResponseStorage.ENCRYPTED && !canEncrypt) {
            throw new IdempotencyDefinitionException("IDEM-C003 endpoint '" + endpoint + "' stores responses encrypted,"
                    + " but " + Setting.ENCRYPTION_KEYS.key() + " / " + Setting.ENCRYPTION_ACTIVE_KEY.key() + " are not set");
        }
        String mismatch = values.endpointRaw(Setting.MISMATCH_STATUS, endpoint, null);
        if (!mismatch.equals("422") && !mismatch.equals("409")) {
            throw invalid(values.keyOf(Setting.MISMATCH_STATUS, endpoint), mismatch, "must be 422 or 409");
        }
        FingerprintRules rules = new FingerprintRules(ignoredFields(Setting.FINGERPRINT_IGNORE, endpoint,
                values.endpointRaw(Setting.FINGERPRINT_IGNORE, endpoint, null)), fieldDefaults(Setting.FINGERPRINT_DEFAULTS,
                endpoint, values.endpointRaw(Setting.FINGERPRINT_DEFAULTS, endpoint, null)), queryIncluded(
                Setting.FINGERPRINT_QUERY, endpoint, values.endpointRaw(Setting.FINGERPRINT_QUERY, endpoint, null)),
                apiVersionSource(Setting.API_VERSION, endpoint, values.endpointRaw(Setting.API_VERSION, endpoint, null)));
        Optional<FingerprintRules> previousRules = previousRules(endpoint, rules);
        Optional<Instant> previousUntil = configured(Setting.FINGERPRINT_PREVIOUS_UNTIL, endpoint)
                .filter(value -> !value.isBlank()).map(value -> instant(values.keyOf(Setting.FINGERPRINT_PREVIOUS_UNTIL,
                        endpoint), value));
        List<String> redacted = splitList(values.endpointRaw(Setting.REDACT_FIELDS, endpoint, null));
        try {
            JsonRedactor.validate(redacted);
        } catch (IllegalArgumentException e) {
            throw invalid(values.keyOf(Setting.REDACT_FIELDS, endpoint), String.join(",", redacted), e.getMessage());
        }
        String oversize = values.endpointRaw(Setting.OVERSIZE_RESPONSE, endpoint, null);
        if (!oversize.equals("omit-body") && !oversize.equals("fail")) {
            throw invalid(values.keyOf(Setting.OVERSIZE_RESPONSE, endpoint), oversize, "must be omit-body or fail");
        }
        String redactMode = values.endpointRaw(Setting.REDACT_MODE, endpoint, null);
        if (!redactMode.equals("mask") && !redactMode.equals("remove")) {
            throw invalid(values.keyOf(Setting.REDACT_MODE, endpoint), redactMode, "must be mask or remove");
        }
        Redaction redaction = new Redaction(redacted,
                redactMode.equals("mask") ? Redaction.Mode.MASK : Redaction.Mode.REMOVE);
        List<String> replayed = splitList(values.endpointRaw(Setting.REPLAYED_HEADERS, endpoint, null));
        for (String header : replayed) {
            if (header.equalsIgnoreCase("Set-Cookie") || header.equalsIgnoreCase("Authorization")
                    || header.equalsIgnoreCase("WWW-Authenticate") || header.equalsIgnoreCase("Proxy-Authenticate")) {
                throw invalid(values.keyOf(Setting.REPLAYED_HEADERS, endpoint), header, "credentials are never stored");
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
                : values.nonNegative(Setting.MAX_IN_FLIGHT_PER_PRINCIPAL, endpoint);
        int maxKeys = limitsOnlyWhereSet ? setForEndpointOnly(Setting.MAX_KEYS_PER_ENDPOINT, endpoint)
                : values.nonNegative(Setting.MAX_KEYS_PER_ENDPOINT, endpoint);
        return new EndpointPolicy(endpoint, keySource, keyName, annotation.keyRequired(), retention, lease,
                inFlight, wait, storage, annotation.replayWith(), Arrays.asList(annotation.finalOn()),
                Arrays.asList(annotation.retryOn()), annotation.externalSideEffects(), Integer.parseInt(mismatch),
                rules.ignoredFields(), rules.defaults(), maxInFlight, maxKeys,
                positive(values.keyOf(Setting.MAX_RESPONSE_BYTES, endpoint), values.endpointRaw(Setting.MAX_RESPONSE_BYTES, endpoint, null)),
                replayed, retryAfterMax, rules.apiVersion(), values.endpointRaw(Setting.STATUS_PATH, endpoint, null),
                rules.query(), redaction, oversize.equals("fail"), previousRules, previousUntil, annotation.asynchronous(),
                messages, claimInTransaction, cacheOutcomes(endpoint));
    }

    // Only where Redis is configured: an endpoint's own false turns it off there.
    private boolean cacheOutcomes(String endpoint) {
        if (values.raw(Setting.REDIS_URL).isBlank()) {
            return false;
        }
        String value = values.endpointRaw(Setting.REDIS, endpoint, null).trim().toLowerCase(Locale.ROOT);
        if (!value.equals("true") && !value.equals("false")) {
            throw invalid(values.keyOf(Setting.REDIS, endpoint), value, "must be true or false");
        }
        return value.equals("true");
    }

    private boolean claimInTransaction(String endpoint, ClaimMode annotated) {
        Optional<String> specific = source.get(Setting.CLAIM.key(endpoint));
        if (specific.isEmpty() && annotated != ClaimMode.CONFIGURED) {
            return annotated == ClaimMode.IN_TRANSACTION;
        }
        String value = specific.orElseGet(() -> values.raw(Setting.CLAIM)).toLowerCase(Locale.ROOT);
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
        List<String> properties = splitList(values.endpointRaw(Setting.MESSAGE_FINGERPRINT_PROPERTIES, endpoint, null));
        String deliveries = values.endpointRaw(Setting.MESSAGE_MAX_DELIVERIES, endpoint, null);
        return new MessagePolicy(tenant, principal, properties,
                positive(values.keyOf(Setting.MESSAGE_MAX_DELIVERIES, endpoint), deliveries));
    }

    // A source of one of the forms its operations have (a message has no caller, a call no properties).
    private ScopeSource scopeSource(Setting setting, String endpoint, ScopeSource.Kind refused, String why) {
        String value = values.endpointRaw(setting, endpoint, null);
        ScopeSource source;
        try {
            source = ScopeSource.parse(value);
        } catch (IllegalArgumentException e) {
            throw invalid(values.keyOf(setting, endpoint), value, e.getMessage());
        }
        if (source.kind() == refused) {
            throw invalid(values.keyOf(setting, endpoint), value, why);
        }
        return source;
    }

    // A limit set for this endpoint by name; otherwise none (0).
    private int setForEndpointOnly(Setting setting, String endpoint) {
        return source.get(setting.key(endpoint)).isPresent() ? values.nonNegative(setting, endpoint) : 0;
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
            throw invalid(values.keyOf(setting, endpoint), String.join(",", ignored), e.getMessage());
        }
        return ignored;
    }

    private boolean queryIncluded(Setting setting, String endpoint, String value) {
        if (!value.equals("include") && !value.equals("ignore")) {
            throw invalid(values.keyOf(setting, endpoint), value, "must be include or ignore");
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
                throw invalid(values.keyOf(setting, endpoint), raw, "entries must be path=<json>");
            }
            defaults.put(entry.substring(0, eq).trim(), entry.substring(eq + 1).trim());
        }
        try {
            JacksonCanonicalJson.validateDefaults(defaults);
        } catch (IllegalArgumentException e) {
            throw invalid(values.keyOf(setting, endpoint), "(see message)", e.getMessage());
        }
        return defaults;
    }

    private InFlightPolicy inFlight(String endpoint, InFlightPolicy annotated) {
        Optional<String> specific = source.get(Setting.IN_FLIGHT.key(endpoint));
        if (specific.isEmpty() && annotated != InFlightPolicy.CONFIGURED) {
            return annotated;
        }
        String value = specific.orElseGet(() -> values.raw(Setting.IN_FLIGHT)).toLowerCase(Locale.ROOT);
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
        String value = specific.orElseGet(() -> values.raw(Setting.STORAGE)).toLowerCase(Locale.ROOT);
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
        String value = values.endpointRaw(setting, endpoint, annotated);
        Duration duration = duration(key, value);
        if (duration.isNegative() || duration.isZero()) {
            throw invalid(key, value, "must be a positive duration");
        }
        return duration;
    }
}
