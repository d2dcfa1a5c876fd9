package dev.idempotency.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * An endpoint's rules of canonicalization: what of a request its fingerprint leaves out or fills in, and where
 * it reads the API version. Changing one changes the fingerprint of the very same request, so every stored
 * fingerprint names the rules it was made under ({@link #id()}), and a retry is compared under those rules when
 * the endpoint still accepts them (docs/adr/0009).
 *
 * @param ignoredFields body fields left out
 * @param defaults      body fields that mean a value when absent (path to JSON text)
 * @param query         whether the query string is part of the fingerprint
 * @param apiVersion    where the API version is read
 */
public record FingerprintRules(Set<String> ignoredFields, Map<String, String> defaults, boolean query,
                               ApiVersionSource apiVersion) {
    public FingerprintRules {
        ignoredFields = Set.copyOf(ignoredFields);
        defaults = Map.copyOf(defaults);
        Objects.requireNonNull(apiVersion, "apiVersion");
    }

    /**
     * A short name of these rules, the same on every node and release for the same rules whatever order they
     * were configured in: 8 hex characters of a SHA-256 over their canonical description.
     */
    public String id() {
        StringBuilder description = new StringBuilder("rules-v1\n");
        new TreeSet<>(ignoredFields).forEach(field -> description.append("ignore ").append(field).append('\n'));
        new TreeMap<>(defaults).forEach((path, json) -> description.append("default ").append(path).append('=')
                .append(json).append('\n'));
        description.append("query ").append(query).append('\n');
        description.append("api-version ").append(apiVersion.header() == null ? "" : "header:" + apiVersion.header())
                .append(apiVersion.segment() < 0 ? "" : "path-segment:" + apiVersion.segment()).append('\n');
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(description.toString().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 4);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
