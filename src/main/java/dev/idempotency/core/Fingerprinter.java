package dev.idempotency.core;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The request fingerprint: HMAC-SHA-256 with a server secret over method, path, media type, API version,
 * principal, the canonical body and the canonical query (when there is one), each length-prefixed; the query
 * comes last, after the length-prefixed body, so that a request without one keeps the value it always had. Stored as {@code v1:<64 hex>}; the version
 * names the canonicalization, so that a change of rules never makes old and new instances disagree
 * silently. A server secret (not a bare hash) keeps low-entropy bodies from being guessed offline from a
 * leaked table. After a rotation, a fingerprint made with a previous secret still matches.
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
     * Fingerprints a request.
     *
     * @throws CanonicalJson.MalformedBodyException when a JSON body does not parse
     */
    public RequestFingerprint fingerprint(RequestFacts facts, Set<String> ignoredFields, Map<String, String> defaults) {
        byte[] body = facts.isJson() && facts.body().length > 0
                ? canonicalJson.canonicalize(facts.body(), ignoredFields, defaults)
                : facts.body();
        return new RequestFingerprint(facts, body);
    }

    /** A request's fingerprint under the current secret, able to recognise those made under earlier ones. */
    public final class RequestFingerprint {
        private final RequestFacts facts;
        private final byte[] canonicalBody;
        private final String current;

        private RequestFingerprint(RequestFacts facts, byte[] canonicalBody) {
            this.facts = facts;
            this.canonicalBody = canonicalBody;
            this.current = compute(keyedMacs.get(0));
        }

        /** The value to store: {@code v1:<hex>} under the current secret. */
        public String value() {
            return current;
        }

        /** Whether a stored fingerprint is this request's, under the current or a previous secret. */
        public boolean matches(String stored) {
            if (constantTimeEquals(current, stored)) {
                return true;
            }
            if (stored == null || !stored.startsWith(VERSION + ":")) {
                return false;
            }
            for (int i = 1; i < keyedMacs.size(); i++) {
                if (constantTimeEquals(compute(keyedMacs.get(i)), stored)) {
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
