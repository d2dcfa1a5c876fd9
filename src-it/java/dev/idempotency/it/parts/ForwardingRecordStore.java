package dev.idempotency.it.parts;

import dev.idempotency.RecordStatus;
import dev.idempotency.jdbc.JdbcRecordStore;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.QuotaCharge;
import dev.idempotency.spi.QuotaExceededException;
import dev.idempotency.spi.RecordStore;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.ConfigProvider;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The application's own record store, as an application that audits its claims would write one: it forwards every
 * statement to the library's JDBC store on the record table, counts the claims it saw, and lists nothing (it does
 * not declare {@link dev.idempotency.spi.StoreCapability#LISTING_RECORDS}), so that the admin resource's listing is
 * unsupported here (501).
 */
@ApplicationScoped
public class ForwardingRecordStore implements RecordStore {
    private final AtomicInteger claims = new AtomicInteger();
    private JdbcRecordStore records;

    @PostConstruct
    void connect() {
        try {
            DataSource dataSource = (DataSource) new InitialContext().lookup(
                    ConfigProvider.getConfig().getValue("idempotency.datasource", String.class));
            records = JdbcRecordStore.forDataSource(dataSource, ConfigProvider.getConfig()
                    .getOptionalValue("idempotency.table", String.class).orElse("idempotency_record"));
        } catch (NamingException e) {
            throw new IllegalStateException(e);
        }
        // The library creates the schema only for its own store; this one may be the first on a fresh database.
        records.schema().migrate();
    }

    /** How many claims (inserts) went through this store. */
    public int claims() {
        return claims.get();
    }

    @Override
    public void insert(IdempotencyRecord record, QuotaCharge charge, List<String> aliasKeys) {
        records.insert(record, charge, aliasKeys);
        claims.incrementAndGet();
    }

    @Override
    public Optional<IdempotencyRecord> find(String scopeKey) {
        return records.find(scopeKey);
    }

    @Override
    public boolean takeOver(String scopeKey, String expectedOwnerToken, RecordStatus expectedStatus,
                            IdempotencyRecord replacement, QuotaCharge charge) {
        return records.takeOver(scopeKey, expectedOwnerToken, expectedStatus, replacement, charge);
    }

    @Override
    public boolean finish(String scopeKey, String ownerToken, Completion completion) {
        return records.finish(scopeKey, ownerToken, completion);
    }

    @Override
    public boolean renewLease(String scopeKey, String ownerToken, Instant now, Instant leaseUntil, Instant expiresAt) {
        return records.renewLease(scopeKey, ownerToken, now, leaseUntil, expiresAt);
    }

    @Override
    public List<IdempotencyRecord> findProcessing(Instant expiresFrom, String afterScopeKey, Instant expiresBefore,
                                                  int limit) {
        return records.findProcessing(expiresFrom, afterScopeKey, expiresBefore, limit);
    }

    @Override
    public boolean reconcile(QuotaExceededException.Limit limit, String tenant, String principal, String endpoint,
                             Instant now) {
        return records.reconcile(limit, tenant, principal, endpoint, now);
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        return records.purgeExpired(now, batchSize);
    }
}
