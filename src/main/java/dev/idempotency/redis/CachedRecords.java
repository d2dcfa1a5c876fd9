package dev.idempotency.redis;

import dev.idempotency.RecordStatus;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A finished record as bytes in the cache: every column the database holds, the stored response as it is stored
 * (sealed when the endpoint stores it encrypted), times in microseconds as the database keeps them. A versioned
 * binary form: an entry of another version, or one that does not read, counts as absent.
 */
final class CachedRecords {
    private static final int VERSION = 1;

    private CachedRecords() {
    }

    static byte[] write(IdempotencyRecord r) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256 + r.response().map(s -> s.body().length).orElse(0));
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(VERSION);
            out.writeUTF(r.scopeKey());
            out.writeUTF(r.tenant());
            out.writeUTF(r.principal());
            out.writeUTF(r.endpoint());
            out.writeUTF(r.requestHash());
            out.writeUTF(r.status().name());
            writeOptional(out, r.resourceId());
            out.writeUTF(r.ownerToken());
            out.writeInt(r.attempts());
            out.writeLong(micros(r.createdAt()));
            out.writeLong(micros(r.updatedAt()));
            out.writeLong(micros(r.expiresAt()));
            out.writeBoolean(r.response().isPresent());
            if (r.response().isPresent()) {
                StoredResponse response = r.response().get();
                out.writeInt(response.status());
                out.writeInt(response.headers().size());
                for (Map.Entry<String, List<String>> header : response.headers().entrySet()) {
                    out.writeUTF(header.getKey());
                    out.writeInt(header.getValue().size());
                    for (String value : header.getValue()) {
                        out.writeUTF(value);
                    }
                }
                out.writeInt(response.body().length);
                out.write(response.body());
                out.writeUTF(response.bodyEncoding());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /** The record, or empty for bytes of another version or that do not read. */
    static Optional<IdempotencyRecord> read(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            if (in.readByte() != VERSION) {
                return Optional.empty();
            }
            String scopeKey = in.readUTF();
            String tenant = in.readUTF();
            String principal = in.readUTF();
            String endpoint = in.readUTF();
            String requestHash = in.readUTF();
            RecordStatus status = RecordStatus.valueOf(in.readUTF());
            Optional<String> resourceId = readOptional(in);
            String ownerToken = in.readUTF();
            int attempts = in.readInt();
            Instant createdAt = instant(in.readLong());
            Instant updatedAt = instant(in.readLong());
            Instant expiresAt = instant(in.readLong());
            Optional<StoredResponse> response = Optional.empty();
            if (in.readBoolean()) {
                int responseStatus = in.readInt();
                int headerCount = in.readInt();
                Map<String, List<String>> headers = new LinkedHashMap<>();
                for (int i = 0; i < headerCount; i++) {
                    String name = in.readUTF();
                    int valueCount = in.readInt();
                    List<String> values = new ArrayList<>(valueCount);
                    for (int j = 0; j < valueCount; j++) {
                        values.add(in.readUTF());
                    }
                    headers.put(name, List.copyOf(values));
                }
                byte[] body = new byte[in.readInt()];
                in.readFully(body);
                response = Optional.of(new StoredResponse(responseStatus, headers, body, in.readUTF()));
            }
            if (in.read() != -1) {
                return Optional.empty();
            }
            return Optional.of(new IdempotencyRecord(scopeKey, tenant, principal, endpoint, requestHash, status,
                    resourceId, response, ownerToken, Optional.empty(), attempts, createdAt, updatedAt, expiresAt));
        } catch (IOException | RuntimeException unreadable) {
            return Optional.empty();
        }
    }

    private static void writeOptional(DataOutputStream out, Optional<String> value) throws IOException {
        out.writeBoolean(value.isPresent());
        if (value.isPresent()) {
            out.writeUTF(value.get());
        }
    }

    private static Optional<String> readOptional(DataInputStream in) throws IOException {
        return in.readBoolean() ? Optional.of(in.readUTF()) : Optional.empty();
    }

    private static long micros(Instant instant) {
        return ChronoUnit.MICROS.between(Instant.EPOCH, instant);
    }

    private static Instant instant(long micros) {
        return Instant.EPOCH.plus(micros, ChronoUnit.MICROS);
    }
}
