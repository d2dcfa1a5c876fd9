package dev.idempotency.deployment;

import dev.idempotency.config.IdempotencySettings;
import dev.idempotency.core.EndpointPolicy;
import dev.idempotency.jdbc.DatabaseClock;
import dev.idempotency.jdbc.JdbcRecordStore;
import dev.idempotency.jdbc.SchemaMigrations;
import dev.idempotency.metrics.IdempotencyMeters;
import dev.idempotency.redis.RedisOutcomeCache;
import dev.idempotency.spi.OutcomeCache;
import dev.idempotency.spi.RecordStore;

import java.time.Clock;
import java.util.Collection;
import java.util.Optional;

/**
 * Where the deployment keeps its records and whose time it reads: the application's record store or the JDBC one
 * (its tables validated or migrated, as {@code idempotency.schema} says), the protocol's clock (the database's, where
 * configured: a node whose own clock runs ahead must not take over a live lease), and the outcome cache (the
 * application's, else Redis at {@code idempotency.redis.url}, else none).
 *
 * @param ownCache      whether the cache is the library's own (Redis), which it closes at undeployment
 * @param databaseClock the database's clock, which the maintenance refreshes, when it is the protocol's
 */
record StorageSetup(RecordStore store, OutcomeCache cache, boolean ownCache, Clock clock,
                    Optional<DatabaseClock> databaseClock) {

    static StorageSetup assemble(IdempotencySettings settings, Collection<EndpointPolicy> policies,
                                 Optional<RecordStore> applicationStore,
                                 Optional<OutcomeCache> applicationCache, Clock ownClock,
                                 Optional<IdempotencyMeters> meters) {
        RecordStore store = applicationStore.orElseGet(() -> ServerResources.jdbcStore(settings));
        DeploymentChecks.storeServes(store, policies);
        if (store instanceof JdbcRecordStore jdbc) {
            // Outside any transaction: the migration is its own (SchemaMigrations#migrate).
            SchemaMigrations schema = jdbc.schema();
            switch (settings.schema()) {
                case VALIDATE -> schema.validate();
                case MIGRATE -> {
                    schema.migrate();
                    schema.validate();
                }
                case NONE -> {
                    // The operator's tables, as they are.
                }
            }
        }
        Clock clock = ownClock;
        DatabaseClock databaseClock = null;
        if (settings.usesDatabaseClock() && store instanceof JdbcRecordStore jdbc) {
            databaseClock = jdbc.databaseClock(ownClock, MaintenanceSchedule.CLOCK_REFRESH);
            databaseClock.refresh();
            clock = databaseClock;
        }
        Optional<RedisOutcomeCache> redis = applicationCache.isPresent() ? Optional.empty()
                : ServerResources.redis(settings, clock, meters);
        OutcomeCache cache = applicationCache.orElseGet(() -> redis.<OutcomeCache>map(r -> r).orElse(OutcomeCache.NONE));
        return new StorageSetup(store, cache, redis.isPresent(), clock, Optional.ofNullable(databaseClock));
    }
}
