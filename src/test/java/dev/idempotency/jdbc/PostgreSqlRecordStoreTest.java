package dev.idempotency.jdbc;

import dev.idempotency.RecordStatus;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.StoredResponse;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class PostgreSqlRecordStoreTest extends RecordStoreContract {
    @Override
    String database() {
        return "postgresql";
    }

    // The finish changes no indexed column, and the page has room for the row to grow by its response: a HOT
    // update (no index entry written). Counted per finish transaction, each committed as in production.
    @Test
    void theFinishIsAHotUpdateWithNoIndexWritten() {
        Instant now = Instant.parse("2026-12-03T10:15:30Z");
        int operations = 400;
        int inFlight = 16;
        byte[] body = ("{\"id\":\"p-0001\",\"merchantOrderNo\":\"A-1\",\"amount\":100.00,\"currency\":\"EUR\","
                + "\"status\":\"CAPTURED\",\"acquirerReference\":\"" + "r".repeat(180) + "\"}").getBytes(StandardCharsets.UTF_8);
        long updates = 0;
        long hot = 0;
        for (int i = 0; i < operations + inFlight; i++) {
            int claimed = i;
            if (claimed < operations) {
                tx(() -> db.store.insert(processing("hot" + claimed, "t" + claimed, now)));
            }
            int n = i - inFlight;
            if (n < 0) {
                continue;
            }
            Completion done = new Completion(RecordStatus.SUCCEEDED, Optional.of("p-" + n),
                    Optional.of(new StoredResponse(201, headers(), body, StoredResponse.PLAIN)), now.plusMillis(20),
                    now.plusMillis(20).plus(Duration.ofDays(1)).minusSeconds(30));
            // The backend's counts not yet reported, before and after the finish, on the transaction's connection.
            long[] delta = tx(() -> {
                long[] before = updateCounts();
                assertThat(db.store.finish(scope("hot" + n), token("t" + n), done)).isTrue();
                long[] after = updateCounts();
                return new long[] {after[0] - before[0], after[1] - before[1]};
            });
            updates += delta[0];
            hot += delta[1];
        }
        System.out.println("PostgreSQL finish: " + updates + " updates, " + hot + " HOT");
        assertThat(updates).isEqualTo(operations);
        assertThat(hot).isEqualTo(operations);
    }

    private long[] updateCounts() {
        Map<String, Object> row = db.database.query(
                "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = ?", db.table).get(0);
        return new long[] {((Number) row.get("n_tup_upd")).longValue(), ((Number) row.get("n_tup_hot_upd")).longValue()};
    }
}
