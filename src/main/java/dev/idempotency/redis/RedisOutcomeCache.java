package dev.idempotency.redis;

import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.OutcomeCache;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.RedisSentinelClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.SetParams;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Finished outcomes in Redis, with Jedis (docs/adr/0015): {@code GET} and {@code SET ... PXAT <expiresAt>} of the
 * record's bytes under {@code idempotency:<scope key>} on the caller's thread, each bounded by the client's connect
 * and socket timeouts and by the pool's wait. Every failure (refused, timed out, unreadable reply) is "absent" to
 * the protocol. After {@link #FAILURES_TO_OPEN} failures in a row the cache is skipped for {@link #OPEN_FOR}, so that a
 * dead or hanging Redis costs one timeout per period, not one per request; then one call tries it again.
 */
public final class RedisOutcomeCache implements OutcomeCache, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(RedisOutcomeCache.class.getName());
    static final int FAILURES_TO_OPEN = 3;
    static final Duration OPEN_FOR = Duration.ofSeconds(5);
    private static final String PREFIX = "idempotency:";
    // Enough connections for the request threads of a busy server; a request waits for one at most the timeout.
    private static final int MAX_CONNECTIONS = 64;

    private final Supplier<UnifiedJedis> connect;
    private final String address;
    private final Clock clock;
    private final Duration openFor;
    private final Consumer<String> onFailure;
    private final AtomicInteger failures = new AtomicInteger();
    private volatile Instant skipUntil = Instant.MIN;
    private volatile boolean open;
    private volatile UnifiedJedis client;

    RedisOutcomeCache(Supplier<UnifiedJedis> connect, String address, Clock clock, Duration openFor,
                      Consumer<String> onFailure) {
        this.connect = connect;
        this.address = address;
        this.clock = clock;
        this.openFor = openFor;
        this.onFailure = onFailure;
    }

    /**
     * The cache at {@code address}; nothing is connected before the first use, so that a Redis that is down at
     * start-up only costs what it costs later (the requests go to the database).
     *
     * @param timeout each connect, command and pool wait at most this long
     * @param failed   told of each command that failed, by name ({@code get}, {@code set}), for the metrics
     */
    public static RedisOutcomeCache connect(RedisAddress address, Duration timeout, Clock clock,
                                            Consumer<String> failed) {
        return new RedisOutcomeCache(() -> client(address, timeout), address.toString(), clock, OPEN_FOR, failed);
    }

    static UnifiedJedis client(RedisAddress address, Duration timeout) {
        int millis = (int) Math.max(1, timeout.toMillis());
        DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder().connectionTimeoutMillis(millis)
                .socketTimeoutMillis(millis).ssl(address.tls()).clientName("idempotency-cdi");
        address.user().ifPresent(config::user);
        address.password().ifPresent(config::password);
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(MAX_CONNECTIONS);
        pool.setMaxIdle(MAX_CONNECTIONS);
        pool.setMaxWait(Duration.ofMillis(millis));
        pool.setBlockWhenExhausted(true);
        Set<HostAndPort> nodes = new LinkedHashSet<>();
        address.nodes().forEach(n -> nodes.add(new HostAndPort(n.host(), n.port())));
        return switch (address.kind()) {
            case STANDALONE -> RedisClient.builder().hostAndPort(nodes.iterator().next())
                    .clientConfig(config.database(address.database()).build()).poolConfig(pool).build();
            case SENTINEL -> RedisSentinelClient.builder().masterName(address.master()).sentinels(nodes)
                    .sentinelClientConfig(DefaultJedisClientConfig.builder().connectionTimeoutMillis(millis)
                            .socketTimeoutMillis(millis).build())
                    .clientConfig(config.database(address.database()).build()).poolConfig(pool).build();
            case CLUSTER -> RedisClusterClient.builder().nodes(nodes).clientConfig(config.build()).poolConfig(pool)
                    .maxAttempts(1).maxTotalRetriesDuration(Duration.ofMillis(millis)).build();
        };
    }

    @Override
    public Optional<IdempotencyRecord> get(String scopeKey) {
        byte[] bytes = call("get", jedis -> jedis.get(key(scopeKey)));
        return bytes == null ? Optional.empty() : CachedRecords.read(bytes);
    }

    @Override
    public void put(IdempotencyRecord finished) {
        Instant expiresAt = finished.expiresAt();
        if (!expiresAt.isAfter(clock.instant())) {
            return;
        }
        byte[] value = CachedRecords.write(finished);
        call("set", jedis -> jedis.set(key(finished.scopeKey()), value, SetParams.setParams().pxAt(expiresAt.toEpochMilli())));
    }

    /** The entry's remaining time to live in milliseconds (for tests: it must end by the record's expiry). */
    long ttlMillis(String scopeKey) {
        return client().pttl(key(scopeKey));
    }

    /** Whether the cache is skipped now, after failures in a row: its commands are not sent, every read is a miss. */
    public boolean skipping() {
        return open && clock.instant().isBefore(skipUntil);
    }

    private <T> T call(String name, java.util.function.Function<UnifiedJedis, T> command) {
        if (skipping()) {
            return null;
        }
        try {
            T result = command.apply(client());
            if (failures.getAndSet(0) > 0 && open) {
                open = false;
                LOG.info("IDEM-I012 Redis (" + address + ") answers again: replays are read there again");
            }
            return result;
        } catch (RuntimeException failed) {
            // JedisException and its kinds (connection refused, socket timeout, pool exhausted, cluster redirections
            // that ran out), and anything else a client may throw: the database answers instead.
            onFailure.accept(name);
            if (failures.incrementAndGet() >= FAILURES_TO_OPEN) {
                skipUntil = clock.instant().plus(openFor);
                if (!open) {
                    open = true;
                    LOG.log(Level.WARNING, "IDEM-W021 Redis (" + address + ") failed " + failures.get() + " times in a"
                            + " row; replays are read from the database, and Redis is tried again every " + openFor,
                            failed);
                }
            }
            return null;
        }
    }

    private UnifiedJedis client() {
        UnifiedJedis current = client;
        if (current == null) {
            synchronized (this) {
                if (client == null) {
                    client = connect.get();
                }
                current = client;
            }
        }
        return current;
    }

    private static byte[] key(String scopeKey) {
        return (PREFIX + scopeKey).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        UnifiedJedis current = client;
        if (current != null) {
            current.close();
        }
    }
}
