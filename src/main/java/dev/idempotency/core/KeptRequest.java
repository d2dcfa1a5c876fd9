package dev.idempotency.core;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * What an accepted asynchronous operation keeps with its claim so that another node can run it again when the node
 * that accepted it dies (docs/adr/0020): the client's key and the request as its fingerprint read it — from which
 * the operation is made again and checked against the record's scope key and fingerprint, so a kept input that was
 * changed in the table does not run — and the trigger's own encoding of its method's arguments.
 *
 * @param key         the client's idempotency key
 * @param method      HTTP method
 * @param path        the raw request path
 * @param query       the raw query string, or ""
 * @param contentType Content-Type as sent, or ""
 * @param apiVersion  the API version as the endpoint's fingerprint rules read it, or ""
 * @param baseUri     the application's base URI, against which the outcome's relative {@code Location} is kept
 * @param body        the body bytes
 * @param arguments   the method's arguments, as the trigger wrote them
 */
public record KeptRequest(String key, String method, String path, String query, String contentType, String apiVersion,
                          String baseUri, byte[] body, byte[] arguments) {
    // Bumped when the layout changes; a node reads the versions it knows and leaves the others to be given back.
    private static final int VERSION = 1;

    public KeptRequest {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(query, "query");
        Objects.requireNonNull(contentType, "contentType");
        Objects.requireNonNull(apiVersion, "apiVersion");
        Objects.requireNonNull(baseUri, "baseUri");
        body = body.clone();
        arguments = arguments.clone();
    }

    @Override
    public byte[] body() {
        return body.clone();
    }

    @Override
    public byte[] arguments() {
        return arguments.clone();
    }

    /** The bytes kept: a version, then each field length-prefixed. */
    public byte[] encode() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256 + body.length + arguments.length);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(VERSION);
            for (String text : new String[] {key, method, path, query, contentType, apiVersion, baseUri}) {
                write(out, text.getBytes(StandardCharsets.UTF_8));
            }
            write(out, body);
            write(out, arguments);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * The request {@link #encode} kept.
     *
     * @throws IllegalArgumentException for bytes of another layout version, or not of this layout at all
     */
    public static KeptRequest decode(byte[] kept) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(kept))) {
            int version = in.readInt();
            if (version != VERSION) {
                throw new IllegalArgumentException("a kept request of layout version " + version + "; this node reads "
                        + VERSION);
            }
            String[] texts = new String[7];
            for (int i = 0; i < texts.length; i++) {
                texts[i] = new String(read(in, kept.length), StandardCharsets.UTF_8);
            }
            return new KeptRequest(texts[0], texts[1], texts[2], texts[3], texts[4], texts[5], texts[6],
                    read(in, kept.length), read(in, kept.length));
        } catch (IOException e) {
            throw new IllegalArgumentException("not a kept request: " + e, e);
        }
    }

    private static void write(DataOutputStream out, byte[] field) throws IOException {
        out.writeInt(field.length);
        out.write(field);
    }

    private static byte[] read(DataInputStream in, int bound) throws IOException {
        int length = in.readInt();
        if (length < 0 || length > bound) {
            throw new IOException("field length " + length + " out of bounds");
        }
        byte[] field = new byte[length];
        in.readFully(field);
        return field;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeptRequest k && k.key.equals(key) && k.method.equals(method) && k.path.equals(path)
                && k.query.equals(query) && k.contentType.equals(contentType) && k.apiVersion.equals(apiVersion)
                && k.baseUri.equals(baseUri) && Arrays.equals(k.body, body) && Arrays.equals(k.arguments, arguments);
    }

    @Override
    public int hashCode() {
        return Objects.hash(key, method, path, query, contentType, apiVersion, baseUri, Arrays.hashCode(body),
                Arrays.hashCode(arguments));
    }

    @Override
    public String toString() {
        // The key and the body stay out of logs.
        return "KeptRequest[" + method + " " + path + ", " + body.length + " body bytes]";
    }
}
