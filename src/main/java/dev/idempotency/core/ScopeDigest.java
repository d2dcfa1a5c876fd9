package dev.idempotency.core;

import dev.idempotency.Scope;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The primary key of a record: SHA-256 over the scope's four parts, each length-prefixed so that no two
 * scopes share an encoding, as 64 lower-case hex characters. Fixed length whatever the key's length.
 */
public final class ScopeDigest {
    private ScopeDigest() {
    }

    public static String of(Scope scope) {
        MessageDigest sha = sha256();
        update(sha, "scope-v1");
        update(sha, scope.tenant());
        update(sha, scope.principal());
        update(sha, scope.endpoint());
        update(sha, scope.key());
        return HexFormat.of().formatHex(sha.digest());
    }

    /**
     * A downstream key derived from the scope digest and a purpose: stable for the whole life of the
     * operation, different per purpose, 43 URL-safe characters.
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
