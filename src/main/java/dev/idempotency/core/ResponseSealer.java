package dev.idempotency.core;

import dev.idempotency.spi.StoredResponse;

import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Encrypts stored response bodies at rest with AES-GCM. Each body names the key id it was sealed with
 * ({@code aes-gcm:<id>}), so keys rotate by adding a new active key and keeping the old ones for opening.
 * The scope digest is the associated data: a ciphertext moved to another record does not open.
 */
public final class ResponseSealer {
    private static final String PREFIX = "aes-gcm:";
    private static final int IV_BYTES = 12;
    private static final int TAG_BITS = 128;

    private final Map<String, byte[]> keys;
    private final String activeKeyId;
    private final SecureRandom random;

    /**
     * @param keys        key id to AES key (16, 24 or 32 bytes)
     * @param activeKeyId the id new bodies are sealed with, or null when encryption is not configured
     */
    public ResponseSealer(Map<String, byte[]> keys, String activeKeyId, SecureRandom random) {
        this.keys = new LinkedHashMap<>();
        keys.forEach((id, key) -> {
            if (key.length != 16 && key.length != 24 && key.length != 32) {
                throw new IllegalArgumentException("AES key '" + id + "' must be 16, 24 or 32 bytes");
            }
            if (id.isEmpty() || id.contains(":")) {
                throw new IllegalArgumentException("a key id must be non-empty and without ':'");
            }
            this.keys.put(id, key.clone());
        });
        if (activeKeyId != null && !this.keys.containsKey(activeKeyId)) {
            throw new IllegalArgumentException("the active encryption key '" + activeKeyId + "' is not configured");
        }
        this.activeKeyId = activeKeyId;
        this.random = random;
    }

    public static ResponseSealer none() {
        return new ResponseSealer(Map.of(), null, new SecureRandom());
    }

    public boolean canSeal() {
        return activeKeyId != null;
    }

    /** The response with its body encrypted under the active key. */
    public StoredResponse seal(StoredResponse plain, String scopeKey) {
        if (!canSeal()) {
            throw new IllegalStateException("no active encryption key (idempotency.encryption.active-key)");
        }
        byte[] iv = new byte[IV_BYTES];
        random.nextBytes(iv);
        byte[] sealed = crypt(Cipher.ENCRYPT_MODE, keys.get(activeKeyId), iv, scopeKey, plain.body(), 0);
        byte[] out = new byte[IV_BYTES + sealed.length];
        System.arraycopy(iv, 0, out, 0, IV_BYTES);
        System.arraycopy(sealed, 0, out, IV_BYTES, sealed.length);
        return plain.withBody(out, PREFIX + activeKeyId);
    }

    /** The response with a readable body; plain and omitted bodies pass unchanged. */
    public StoredResponse open(StoredResponse stored, String scopeKey) {
        String encoding = stored.bodyEncoding();
        if (!encoding.startsWith(PREFIX)) {
            return stored;
        }
        String keyId = encoding.substring(PREFIX.length());
        byte[] key = keys.get(keyId);
        if (key == null) {
            throw new IllegalStateException("stored response sealed with unknown key id '" + keyId + "'");
        }
        byte[] data = stored.body();
        byte[] iv = java.util.Arrays.copyOf(data, IV_BYTES);
        byte[] plain = crypt(Cipher.DECRYPT_MODE, key, iv, scopeKey, data, IV_BYTES);
        return stored.withBody(plain, StoredResponse.PLAIN);
    }

    private static byte[] crypt(int mode, byte[] key, byte[] iv, String scopeKey, byte[] data, int offset) {
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(mode, new SecretKeySpec(key, "AES"), new GCMParameterSpec(TAG_BITS, iv));
            cipher.updateAAD(scopeKey.getBytes(StandardCharsets.US_ASCII));
            return cipher.doFinal(data, offset, data.length - offset);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("stored response could not be " + (mode == Cipher.ENCRYPT_MODE
                    ? "sealed" : "opened (wrong key or tampered data)"), e);
        }
    }
}
