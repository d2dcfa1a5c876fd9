package dev.idempotency.admin;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.ProblemType;
import dev.idempotency.RecordStatus;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.QuotaCharge;
import dev.idempotency.spi.QuotaExceededException;
import dev.idempotency.spi.RecordStore;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An application's own RecordStore written before RecordStore.list existed: the admin resource's list answers 501
 * admin-unsupported, and nothing is logged as done.
 */
class AdministrationTest {
    @Test
    void aStoreThatCannotListAnswersAdminUnsupported() {
        List<IdempotencyEvent> events = new ArrayList<>();
        Administration administration = new Administration(new StoreWithoutList(), null, Clock.systemUTC(),
                endpoint -> null, () -> 0, events::add);

        assertThatThrownBy(() -> administration.list("ops", "payments.create", EnumSet.allOf(RecordStatus.class),
                Duration.ZERO, 10))
                .isInstanceOfSatisfying(IdempotencyException.class, e -> {
                    assertThat(e.problem().type()).isEqualTo(ProblemType.ADMIN_UNSUPPORTED);
                    assertThat(e.problem().status()).isEqualTo(501);
                });
        assertThat(events).isEmpty();
    }

    // Every method a store had before list; none is called by a list.
    private static final class StoreWithoutList implements RecordStore {
        @Override
        public void insert(IdempotencyRecord record, QuotaCharge charge, List<String> aliasKeys) {
            throw new AssertionError("not called");
        }

        @Override
        public Optional<IdempotencyRecord> find(String scopeKey) {
            throw new AssertionError("not called");
        }

        @Override
        public boolean takeOver(String scopeKey, String expectedOwnerToken, RecordStatus expectedStatus,
                                IdempotencyRecord replacement, QuotaCharge charge) {
            throw new AssertionError("not called");
        }

        @Override
        public boolean finish(String scopeKey, String ownerToken, Completion completion) {
            throw new AssertionError("not called");
        }

        @Override
        public boolean renewLease(String scopeKey, String ownerToken, Instant now, Instant leaseUntil, Instant expiresAt) {
            throw new AssertionError("not called");
        }

        @Override
        public List<IdempotencyRecord> findProcessing(Instant expiresFrom, String afterScopeKey, Instant expiresBefore,
                                                      int limit) {
            throw new AssertionError("not called");
        }

        @Override
        public boolean reconcile(QuotaExceededException.Limit limit, String tenant, String principal, String endpoint,
                                 Instant now) {
            throw new AssertionError("not called");
        }

        @Override
        public int purgeExpired(Instant now, int batchSize) {
            throw new AssertionError("not called");
        }
    }
}
