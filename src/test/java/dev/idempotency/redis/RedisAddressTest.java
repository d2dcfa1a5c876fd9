package dev.idempotency.redis;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RedisAddressTest {

    @Test
    void oneRedisWithCredentialsAndDatabase() {
        RedisAddress a = RedisAddress.parse("redis://app:s%3Acret@cache.local:6380/2");
        assertThat(a.kind()).isEqualTo(RedisAddress.Kind.STANDALONE);
        assertThat(a.nodes()).containsExactly(new RedisAddress.Node("cache.local", 6380));
        assertThat(a.user()).contains("app");
        assertThat(a.password()).contains("s:cret");
        assertThat(a.database()).isEqualTo(2);
        assertThat(a.tls()).isFalse();
        assertThat(a.toString()).doesNotContain("s:cret").doesNotContain("app").contains("cache.local:6380");
        assertThat(RedisAddress.parse("rediss://:pw@h").tls()).isTrue();
        assertThat(RedisAddress.parse("rediss://:pw@h").password()).contains("pw");
        assertThat(RedisAddress.parse("redis://h").nodes()).containsExactly(new RedisAddress.Node("h", 6379));
        assertThat(RedisAddress.parse("redis://[::1]:7000").nodes()).containsExactly(new RedisAddress.Node("::1", 7000));
    }

    @Test
    void sentinelsNameTheirMasterAndClusterSeedsNeedNoDatabase() {
        RedisAddress sentinel = RedisAddress.parse("redis-sentinel://s1:26379,s2,s3:26380/1#payments");
        assertThat(sentinel.kind()).isEqualTo(RedisAddress.Kind.SENTINEL);
        assertThat(sentinel.nodes()).containsExactly(new RedisAddress.Node("s1", 26379), new RedisAddress.Node("s2", 26379),
                new RedisAddress.Node("s3", 26380));
        assertThat(sentinel.master()).isEqualTo("payments");
        assertThat(sentinel.database()).isEqualTo(1);
        RedisAddress cluster = RedisAddress.parse("redis-cluster://c1:7000,c2:7001");
        assertThat(cluster.kind()).isEqualTo(RedisAddress.Kind.CLUSTER);
        assertThat(cluster.nodes()).hasSize(2);
        assertThat(cluster.user()).isEqualTo(Optional.empty());
    }

    @Test
    void whatIsWrongIsNamed() {
        for (List<String> wrong : List.of(List.of("cache.local:6379", "must start with"),
                List.of("memcached://h", "unknown scheme"), List.of("redis://a,b", "names one host"),
                List.of("redis-sentinel://s1,s2", "master's name"), List.of("redis://h:port", "is not a port"),
                List.of("redis://h:70000", "is not a port"), List.of("redis://h/x", "not a number"),
                List.of("redis-cluster://c1/1", "only database 0"), List.of("redis://", "an empty host"))) {
            assertThatThrownBy(() -> RedisAddress.parse(wrong.get(0))).as(wrong.get(0))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(wrong.get(1));
        }
    }
}
