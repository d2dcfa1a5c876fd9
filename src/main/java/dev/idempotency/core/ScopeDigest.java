package dev.idempotency.core;

import dev.idempotency.Scope;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The primary key of a record: HMAC-SHA-256 over the scope's four parts, each length-prefixed so that no two
 * scopes share an encoding, as 64 lower-case hex characters; fixed length whatever the key's length. Keyed,
 * because keys are often business values ({@code merchantOrderNo}): whoever reads the table, or receives a
 * derived key downstream, cannot confirm a guessed key, tenant or user offline without the server's secret.
 *
 * <p>The MAC key is not the secret itself but a subkey derived from it for this one purpose, so that the
 * same configured secret keys the fingerprint and the digest without one ever standing in for the other.
 * After a rotation, the digests under the other accepted secrets ({@link #keys}) keep the records made
 * before it findable (docs/adr/0008).
 */
public final class ScopeDigest {
    private static final String VERSION = "scope-v2";

    private final Mac current;
    private final List<Mac> others;

    /**
     * @param currentSecret the secret new records are keyed with
     * @param otherSecrets  secrets whose records must stay findable: previous ones, and one being rolled out
     */
    public ScopeDigest(byte[] currentSecret, List<byte[]> otherSecrets) {
        this.current = keyed(currentSecret);
        List<Mac> macs = new ArrayList<>();
        otherSecrets.forEach(secret -> macs.add(keyed(secret)));
        this.others = List.copyOf(macs);
    }

    /** The primary key of the scope's record under the current secret. */
    public String of(Scope scope) {
        return compute(current, scope);
    }

    /**
     * Every primary key the scope's record may have: under the current secret first, then under the other
     * accepted secrets (none outside a rotation).
     */
    public List<String> keys(Scope scope) {
        List<String> keys = new ArrayList<>(1 + others.size());
        keys.add(compute(current, scope));
        others.stream().map(mac -> compute(mac, scope)).filter(key -> !keys.contains(key)).forEach(keys::add);
        return keys;
    }

    /**
     * A downstream key derived from a record's primary key and a purpose: stable for the whole life of the
     * operation (across a rotation of the secret too: it depends on the key the record has, not on the
     * secret in use), different per purpose, 43 URL-safe characters. It needs no MAC of its own: the
     * primary key it starts from already cannot be computed without the secret.
     */
    public static String derive(String scopeKey, String purpose) {
        if (purpose == null || purpose.isBlank()) {
            throw new IllegalArgumentException("a derived key needs a purpose");
        }
        MessageDigest sha = sha256();
        update(sha, "derive-v1");
        update(sha, scopeKey);
        update(sha, purpose);
        return java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(sha.digest());
    }

    private static String compute(Mac prototype, Scope scope) {
        Mac mac = clone(prototype);
        field(mac, VERSION);
        field(mac, scope.tenant());
        field(mac, scope.principal());
        field(mac, scope.endpoint());
        field(mac, scope.key());
        return HexFormat.of().formatHex(mac.doFinal());
    }

    // HMAC(secret, purpose) as the key: a subkey for the scope digest alone.
    private static Mac keyed(byte[] secret) {
        if (secret.length < 32) {
            throw new IllegalArgumentException("the scope digest's secret must be at least 32 bytes");
        }
        try {
            Mac derivation = Mac.getInstance("HmacSHA256");
            derivation.init(new SecretKeySpec(secret.clone(), "HmacSHA256"));
            byte[] subkey = derivation.doFinal("idempotency-cdi scope digest".getBytes(StandardCharsets.UTF_8));
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(subkey, "HmacSHA256"));
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is on every Java platform", e);
        }
    }

    // A MAC in the keyed state of the prototype (no key schedule per request); the prototype is only read.
    private static Mac clone(Mac keyed) {
        try {
            return (Mac) keyed.clone();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException("the HmacSHA256 provider cannot clone a keyed MAC", e);
        }
    }

    private static void field(Mac mac, String part) {
        byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
        mac.update(lengthPrefix(bytes.length));
        mac.update(bytes);
    }

    static void update(MessageDigest sha, String part) {
        byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
        sha.update(lengthPrefix(bytes.length));
        sha.update(bytes);
    }

    static byte[] lengthPrefix(int length) {
        return new byte[] {(byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8), (byte) length};
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
