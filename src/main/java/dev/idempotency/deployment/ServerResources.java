package dev.idempotency.deployment;

import dev.idempotency.IdempotencyDefinitionException;
import dev.idempotency.config.IdempotencySettings;
import dev.idempotency.config.Setting;
import dev.idempotency.jdbc.JdbcRecordStore;
import dev.idempotency.jta.TransactionManagerLookup;
import dev.idempotency.metrics.IdempotencyMeters;
import dev.idempotency.redis.RedisAddress;
import dev.idempotency.redis.RedisOutcomeCache;
import dev.idempotency.spi.RecordStore;
import jakarta.transaction.TransactionManager;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.logging.Logger;

/**
 * The defaults the library takes from the server when the application provides no bean of its own: the record
 * table's DataSource, the JTA transaction manager and the managed executor, by their JNDI names; and a Redis client
 * when {@code idempotency.redis.url} is set. Each missing one fails the deployment with its {@code IDEM-D} message.
 */
final class ServerResources {
    private static final Logger LOG = Logger.getLogger(ServerResources.class.getName());
    static final String DEFAULT_EXECUTOR = "java:comp/DefaultManagedExecutorService";

    private ServerResources() {
    }

    /** The JDBC store on the DataSource at {@code idempotency.datasource}. */
    static RecordStore jdbcStore(IdempotencySettings settings) {
        DataSource dataSource;
        try {
            dataSource = (DataSource) new InitialContext().lookup(settings.datasource());
        } catch (NamingException | ClassCastException e) {
            throw new IdempotencyDefinitionException("IDEM-D011 no DataSource at " + settings.datasource()
                    + " (set idempotency.datasource to the JNDI name of the record table's JTA DataSource)", e);
        }
        return JdbcRecordStore.forDataSource(dataSource, settings.table());
    }

    /** The server's transaction manager, at the JNDI names of WildFly and Payara. */
    static TransactionManager transactionManager() {
        TransactionManager tm = TransactionManagerLookup.fromJndi();
        if (tm == null) {
            throw new IdempotencyDefinitionException("IDEM-D010 no JTA TransactionManager found (looked for a CDI bean"
                    + " and at the JNDI names of WildFly and Payara)");
        }
        return tm;
    }

    /** The server's default managed executor, for asynchronous endpoints' tasks. */
    static ExecutorService defaultExecutor() {
        try {
            if (new InitialContext().lookup(DEFAULT_EXECUTOR) instanceof ExecutorService managed) {
                return managed;
            }
        } catch (NamingException | LinkageError e) {
            // Reported below.
        }
        throw new IdempotencyDefinitionException("IDEM-D014 an asynchronous @Idempotent endpoint needs an executor:"
                + " none at " + DEFAULT_EXECUTOR + " and no ExecutorService bean qualified @IdempotencyExecutor");
    }

    /** A Redis client for finished outcomes, when {@code idempotency.redis.url} is set (Jedis in the application). */
    static Optional<RedisOutcomeCache> redis(IdempotencySettings settings, Clock time,
                                             Optional<IdempotencyMeters> meters) {
        Optional<RedisAddress> address = settings.redisAddress();
        if (address.isEmpty()) {
            return Optional.empty();
        }
        try {
            Class.forName("redis.clients.jedis.UnifiedJedis", false, ServerResources.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError missing) {
            throw new IdempotencyDefinitionException("IDEM-C004 " + Setting.REDIS_URL.key() + " is set, but Jedis"
                    + " (redis.clients:jedis) is not in the application: add it to the WAR, or unset the setting");
        }
        LOG.info("IDEM-I013 finished outcomes are kept in Redis (" + address.get() + ") and replayed from there;"
                + " the database decides every claim");
        RedisOutcomeCache redis = RedisOutcomeCache.connect(address.get(), settings.redisTimeout(), time,
                meters.<java.util.function.Consumer<String>>map(measured -> measured::cacheFailed)
                        .orElse(command -> { }));
        meters.ifPresent(measured -> measured.cacheSkipped(() -> redis.skipping() ? 1 : 0));
        return Optional.of(redis);
    }
}
