package dev.idempotency.core;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The request fingerprint: HMAC-SHA-256 with a server secret over method, path, media type, API version,
 * principal, the canonical body and the canonical query (when there is one), each length-prefixed; the query
 * comes last, after the length-prefixed body, so that a request without one keeps the value it always had.
 * Stored as {@code v1:<64 hex>:<rules id>}: the version names the field layout, the rules id the endpoint's
 * {@link FingerprintRules} (ignored fields, defaults, query, API version) it was made under, so that a change
 * of rules never makes old and new instances disagree silently: a retry is compared under the stored rules
 * while the endpoint accepts them, and is neither the same nor another request under rules it does not know.
 * A server secret (not a bare hash) keeps low-entropy bodies from being guessed offline from a leaked table.
 * After a rotation, a fingerprint made with a previous secret still matches.
 */
public final class Fingerprinter {
    /** The version of the canonicalization and the field layout below. */
    public static final String VERSION = "v1";

    // One keyed MAC per secret, never updated: each fingerprint works on a clone, which skips the provider
    // lookup and the key schedule that Mac.getInstance and init cost on every request.
    private final List<Mac> keyedMacs;
    private final CanonicalJson canonicalJson;

    /**
     * @param currentSecret   the secret new fingerprints are made with (at least 32 bytes)
     * @param previousSecrets secrets of earlier rotations, still accepted for matching
     */
    public Fingerprinter(byte[] currentSecret, List<byte[]> previousSecrets, CanonicalJson canonicalJson) {
        if (currentSecret.length < 32) {
            throw new IllegalArgumentException("the fingerprint secret must be at least 32 bytes");
        }
        List<Mac> macs = new ArrayList<>();
        macs.add(keyed(currentSecret));
        previousSecrets.forEach(secret -> macs.add(keyed(secret)));
        this.keyedMacs = List.copyOf(macs);
        this.canonicalJson = canonicalJson;
    }

    /**
     * Fingerprints a request under one set of rules, with none other accepted.
     *
     * @throws CanonicalJson.MalformedBodyException when a JSON body does not parse
     */
    public RequestFingerprint fingerprint(RequestFacts facts, Set<String> ignoredFields, Map<String, String> defaults) {
        return fingerprint(facts, new FingerprintRules(ignoredFields, defaults, true, ApiVersionSource.NONE), Map.of());
    }

    /**
     * Fingerprints a request under its endpoint's rules, able to recognise a fingerprint made under other rules
     * the endpoint still accepts (before or during a change of them): for each, the request as read under those
     * rules, computed only when a stored fingerprint names them.
     *
     * @param facts    the request as read under {@code rules} (API version, query)
     * @param accepted other rules, each with the request as read under them
     * @throws CanonicalJson.MalformedBodyException when a JSON body does not parse
     */
    public RequestFingerprint fingerprint(RequestFacts facts, FingerprintRules rules,
                                          Map<FingerprintRules, Supplier<RequestFacts>> accepted) {
        Map<String, Supplier<RequestFingerprint>> others = new HashMap<>();
        accepted.forEach((other, read) -> others.put(other.id(), () -> fingerprint(read.get(), other, Map.of())));
        return new RequestFingerprint(facts, canonicalBody(facts, rules), rules.id(), others);
    }

    private byte[] canonicalBody(RequestFacts facts, FingerprintRules rules) {
        return facts.isJson() && facts.body().length > 0
                ? canonicalJson.canonicalize(facts.body(), rules.ignoredFields(), rules.defaults())
                : facts.body();
    }

    /** How a stored fingerprint compares with a request's. */
    public enum Match {
        /** The same request (under the current or an accepted secret, and the rules the stored one names). */
        SAME,
        /** Another request. */
        DIFFERENT,
        /**
         * Made under rules this endpoint does not accept (a node with changed rules made it, and this node was
         * not told about them): neither the same nor another request can be told.
         */
        RULES_UNKNOWN
    }

    /** A request's fingerprint under the current secret, able to recognise those made under earlier ones. */
    public final class RequestFingerprint {
        private final RequestFacts facts;
        private final byte[] canonicalBody;
        private final String current;
        private final String rulesId;
        private final Map<String, Supplier<RequestFingerprint>> accepted;

        private RequestFingerprint(RequestFacts facts, byte[] canonicalBody, String rulesId,
                                   Map<String, Supplier<RequestFingerprint>> accepted) {
            this.facts = facts;
            this.canonicalBody = canonicalBody;
            this.current = compute(keyedMacs.get(0));
            this.rulesId = rulesId;
            this.accepted = accepted;
        }

        /** The fingerprint, {@code v1:<hex>} under the current secret. */
        public String value() {
            return current;
        }

        /** The value to store: the fingerprint and the rules it was made under, {@code v1:<hex>:<rules id>}. */
        public String stored() {
            return current + ":" + rulesId;
        }

        /** Whether a stored fingerprint is this request's ({@link #match} is {@link Match#SAME}). */
        public boolean matches(String stored) {
            return match(stored) == Match.SAME;
        }

        /**
         * Compares a stored fingerprint with this request's: under the rules it names (this endpoint's, or other
         * rules it still accepts; one stored without a name was made under the current rules, as before rules
         * were named) and under the current or a previous secret.
         */
        public Match match(String stored) {
            if (stored == null || !stored.startsWith(VERSION + ":")) {
                return Match.DIFFERENT;
            }
            int named = stored.indexOf(':', VERSION.length() + 1);
            String fingerprint = named < 0 ? stored : stored.substring(0, named);
            String rules = named < 0 ? rulesId : stored.substring(named + 1);
            if (rules.equals(rulesId)) {
                return sameUnderAnySecret(fingerprint) ? Match.SAME : Match.DIFFERENT;
            }
            Supplier<RequestFingerprint> other = accepted.get(rules);
            if (other == null) {
                return Match.RULES_UNKNOWN;
            }
            return other.get().sameUnderAnySecret(fingerprint) ? Match.SAME : Match.DIFFERENT;
        }

        private boolean sameUnderAnySecret(String fingerprint) {
            if (constantTimeEquals(current, fingerprint)) {
                return true;
            }
            for (int i = 1; i < keyedMacs.size(); i++) {
                if (constantTimeEquals(compute(keyedMacs.get(i)), fingerprint)) {
                    return true;
                }
            }
            return false;
        }

        private String compute(Mac keyed) {
            Mac mac = fresh(keyed);
            field(mac, VERSION);
            field(mac, facts.method());
            field(mac, facts.path());
            field(mac, facts.mediaType());
            field(mac, facts.apiVersion());
            field(mac, facts.principal());
            mac.update(ScopeDigest.lengthPrefix(canonicalBody.length));
            mac.update(canonicalBody);
            if (!facts.query().isEmpty()) {
                field(mac, facts.query());
            }
            return VERSION + ":" + HexFormat.of().formatHex(mac.doFinal());
        }
    }

    private static Mac keyed(byte[] secret) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.clone(), "HmacSHA256"));
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is on every Java platform", e);
        }
    }

    // A MAC in the keyed state of the prototype; the prototype itself is only read.
    private static Mac fresh(Mac keyed) {
        try {
            return (Mac) keyed.clone();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException("the HmacSHA256 provider cannot clone a keyed MAC", e);
        }
    }

    private static void field(Mac mac, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        mac.update(ScopeDigest.lengthPrefix(bytes.length));
        mac.update(bytes);
    }

    private static boolean constantTimeEquals(String a, String b) {
        if (b == null) {
            return false;
        }
        return MessageDigest.isEqual(a.getBytes(StandardCharsets.US_ASCII), b.getBytes(StandardCharsets.US_ASCII));
    }
}
