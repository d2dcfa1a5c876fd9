package dev.idempotency.jdbc;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idempotency.RecordStatus;
import dev.idempotency.core.CanonicalJson;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.StoredResponse;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A record as the parameters of {@link RecordSql}'s statements and back from its rows, in the column order of the
 * table: the stored response's headers as JSON, instants as UTC {@code LocalDateTime}s truncated to microseconds.
 */
final class RecordRows {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<LinkedHashMap<String, List<String>>> HEADERS = new TypeReference<>() {
    };

    private RecordRows() {
    }

    static int setRecord(PreparedStatement ps, int start, IdempotencyRecord record) throws SQLException {
        int i = start;
        ps.setString(i++, record.scopeKey());
        ps.setString(i++, record.tenant());
        ps.setString(i++, record.principal());
        ps.setString(i++, record.endpoint());
        ps.setString(i++, record.requestHash());
        ps.setString(i++, record.status().name());
        i = setOutcome(ps, i, record.resourceId(), record.response());
        ps.setString(i++, record.ownerToken());
        setInstant(ps, i++, record.leaseUntil().orElse(null));
        ps.setInt(i++, record.attempts());
        setInstant(ps, i++, record.createdAt());
        setInstant(ps, i++, record.updatedAt());
        setInstant(ps, i++, record.expiresAt());
        return i;
    }

    // The parameters of RecordSql's takeOver (the same first ones in its PostgreSQL form); answers the next index.
    static int setTakeOver(PreparedStatement ps, String scopeKey, String expectedOwnerToken,
                           RecordStatus expectedStatus, IdempotencyRecord replacement) throws SQLException {
        int i = 1;
        ps.setString(i++, replacement.requestHash());
        ps.setString(i++, replacement.ownerToken());
        setInstant(ps, i++, replacement.leaseUntil().orElse(null));
        ps.setInt(i++, replacement.attempts());
        setInstant(ps, i++, replacement.createdAt());
        setInstant(ps, i++, replacement.updatedAt());
        setInstant(ps, i++, replacement.expiresAt());
        ps.setString(i++, scopeKey);
        ps.setString(i++, expectedOwnerToken);
        ps.setString(i++, expectedStatus.name());
        return i;
    }

    // The parameters of RecordSql's finish (the same first ones in its PostgreSQL forms); answers the next index.
    static int setFinish(PreparedStatement ps, String scopeKey, String ownerToken, Completion completion)
            throws SQLException {
        int i = 1;
        ps.setString(i++, completion.status().name());
        i = setOutcome(ps, i, completion.resourceId(), completion.response());
        setInstant(ps, i++, completion.updatedAt());
        setInstant(ps, i++, completion.expiresAt());
        setInstant(ps, i++, completion.expiresAt());
        ps.setString(i++, scopeKey);
        ps.setString(i++, ownerToken);
        return i;
    }

    private static int setOutcome(PreparedStatement ps, int start, Optional<String> resourceId,
                                  Optional<StoredResponse> response) throws SQLException {
        int i = start;
        ps.setString(i++, resourceId.orElse(null));
        if (response.isPresent()) {
            StoredResponse r = response.get();
            ps.setInt(i++, r.status());
            ps.setString(i++, headersJson(r.headers()));
            ps.setBytes(i++, r.body());
            ps.setString(i++, r.bodyEncoding());
        } else {
            ps.setNull(i++, Types.INTEGER);
            ps.setNull(i++, Types.VARCHAR);
            ps.setNull(i++, Types.VARBINARY);
            ps.setNull(i++, Types.VARCHAR);
        }
        return i;
    }

    static IdempotencyRecord read(ResultSet rs) throws SQLException {
        Optional<StoredResponse> response = Optional.empty();
        int status = rs.getInt("response_status");
        if (!rs.wasNull()) {
            byte[] body = rs.getBytes("response_body");
            response = Optional.of(new StoredResponse(status, headers(rs.getString("response_headers")),
                    body == null ? new byte[0] : body, rs.getString("body_encoding")));
        }
        return new IdempotencyRecord(rs.getString("scope_key"), rs.getString("tenant"), rs.getString("principal"),
                rs.getString("endpoint"), rs.getString("request_hash"), RecordStatus.valueOf(rs.getString("status")),
                Optional.ofNullable(rs.getString("resource_id")), response, rs.getString("owner_token"),
                Optional.ofNullable(instant(rs, "lease_until")), rs.getInt("attempts"), instant(rs, "created_at"),
                instant(rs, "updated_at"), instant(rs, "expires_at"));
    }

    // The first row of a query answering counts.
    static int[] counts(PreparedStatement ps, int columns) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            int[] counts = new int[columns];
            for (int i = 0; i < columns; i++) {
                counts[i] = rs.getInt(i + 1);
            }
            return counts;
        }
    }

    // {"name":["value",...],...}, written by hand with the canonical form's string writer: the finish of every
    // first execution writes it, and a general serializer cost more than the rest of the record's parameters
    // together (JFR). Read back by Jackson, which also reads what earlier versions wrote with it.
    static String headersJson(Map<String, List<String>> headers) {
        StringBuilder out = new StringBuilder(64 + 32 * headers.size()).append('{');
        for (Map.Entry<String, List<String>> header : headers.entrySet()) {
            if (out.length() > 1) {
                out.append(',');
            }
            CanonicalJson.writeString(header.getKey(), out);
            out.append(":[");
            List<String> values = header.getValue();
            for (int i = 0; i < values.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                CanonicalJson.writeString(values.get(i), out);
            }
            out.append(']');
        }
        return out.append('}').toString();
    }

    static Map<String, List<String>> headers(String json) {
        if (json == null || json.isEmpty()) {
            return Map.of();
        }
        try {
            return JSON.readValue(json, HEADERS);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("IDEM-S005 stored response headers are not valid JSON", e);
        }
    }

    static void setInstant(PreparedStatement ps, int index, Instant instant) throws SQLException {
        if (instant == null) {
            ps.setNull(index, Types.TIMESTAMP);
        } else {
            ps.setObject(index, LocalDateTime.ofInstant(instant.truncatedTo(ChronoUnit.MICROS), ZoneOffset.UTC));
        }
    }

    static Instant instant(ResultSet rs, String column) throws SQLException {
        LocalDateTime value = rs.getObject(column, LocalDateTime.class);
        return value == null ? null : value.toInstant(ZoneOffset.UTC);
    }
}
