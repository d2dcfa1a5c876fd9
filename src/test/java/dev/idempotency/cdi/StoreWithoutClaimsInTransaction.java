package dev.idempotency.cdi;

import dev.idempotency.RecordStatus;
import dev.idempotency.jdbc.JdbcRecordStore;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.QuotaCharge;
import dev.idempotency.spi.QuotaExceededException;
import dev.idempotency.spi.RecordStore;
import dev.idempotency.testing.Databases;
import jakarta.enterprise.inject.Produces;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** An application's RecordStore written before claims in the business transaction: it has none of their methods. */
public class StoreWithoutClaimsInTransaction {

    @Produces
    public RecordStore recordStore() {
        return new OlderStore(JdbcRecordStore.forDataSource(Databases.named("h2").dataSource(), "idempotency_record"));
    }

    static final class OlderStore implements RecordStore {
        private final RecordStore delegate;

        OlderStore(RecordStore delegate) {
            this.delegate = delegate;
        }

        @Override
        public void insert(IdempotencyRecord record, QuotaCharge charge, List<String> aliasKeys) {
            delegate.insert(record, charge, aliasKeys);
        }

        @Override
        public Optional<IdempotencyRecord> find(String scopeKey) {
            return delegate.find(scopeKey);
        }

        @Override
        public boolean takeOver(String scopeKey, String expectedOwnerToken, RecordStatus expectedStatus,
                                IdempotencyRecord replacement, QuotaCharge charge) {
            return delegate.takeOver(scopeKey, expectedOwnerToken, expectedStatus, replacement, charge);
        }

        @Override
        public boolean finish(String scopeKey, String ownerToken, Completion completion) {
            return delegate.finish(scopeKey, ownerToken, completion);
        }

        @Override
        public boolean renewLease(String scopeKey, String ownerToken, Instant now, Instant leaseUntil, Instant expiresAt) {
            return delegate.renewLease(scopeKey, ownerToken, now, leaseUntil, expiresAt);
        }

        @Override
        public List<IdempotencyRecord> findProcessing(Instant expiresFrom, String afterScopeKey, Instant expiresBefore,
                                                      int limit) {
            return delegate.findProcessing(expiresFrom, afterScopeKey, expiresBefore, limit);
        }

        @Override
        public boolean reconcile(QuotaExceededException.Limit limit, String tenant, String principal, String endpoint,
                                 Instant now) {
            return delegate.reconcile(limit, tenant, principal, endpoint, now);
        }

        @Override
        public int purgeExpired(Instant now, int batchSize) {
            return delegate.purgeExpired(now, batchSize);
        }
    }
}
