package dev.idempotency.redis;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * What {@code idempotency.redis.url} names, parsed without Jedis (so that a wrong value fails the deployment whether
 * or not Jedis is there):
 * <ul>
 * <li>{@code redis://[[user]:password@]host[:port][/database]} (or {@code rediss://} for TLS): one Redis;</li>
 * <li>{@code redis-sentinel://[[user]:password@]host:port,host:port[/database]#master}: the master of that name, as
 *     the Sentinels tell (a failover moves the client to the new master);</li>
 * <li>{@code redis-cluster://[[user]:password@]host:port,host:port}: a Redis Cluster, found from those seed nodes.</li>
 * </ul>
 * The port defaults to 6379 (26379 for a Sentinel).
 *
 * @param kind     standalone, sentinel or cluster
 * @param nodes    host:port pairs
 * @param user     ACL user, if any
 * @param password password, if any
 * @param database the database number (standalone and Sentinel)
 * @param master   the Sentinel master name
 * @param tls      whether the connection is TLS
 */
public record RedisAddress(Kind kind, List<Node> nodes, Optional<String> user, Optional<String> password,
                           int database, String master, boolean tls) {

    /** How the address is served. */
    public enum Kind {
        STANDALONE, SENTINEL, CLUSTER
    }

    /** One host and port. */
    public record Node(String host, int port) {
    }

    /** @throws IllegalArgumentException with what is wrong */
    public static RedisAddress parse(String url) {
        int schemeEnd = url.indexOf("://");
        if (schemeEnd < 0) {
            throw new IllegalArgumentException("must start with redis://, rediss://, redis-sentinel:// or redis-cluster://");
        }
        String scheme = url.substring(0, schemeEnd).toLowerCase(Locale.ROOT);
        Kind kind;
        boolean tls = false;
        switch (scheme) {
            case "redis" -> kind = Kind.STANDALONE;
            case "rediss" -> {
                kind = Kind.STANDALONE;
                tls = true;
            }
            case "redis-sentinel" -> kind = Kind.SENTINEL;
            case "redis-cluster" -> kind = Kind.CLUSTER;
            default -> throw new IllegalArgumentException("unknown scheme '" + scheme
                    + "': redis, rediss, redis-sentinel or redis-cluster");
        }
        String rest = url.substring(schemeEnd + 3);
        String master = "";
        int hash = rest.indexOf('#');
        if (hash >= 0) {
            master = decode(rest.substring(hash + 1));
            rest = rest.substring(0, hash);
        }
        Optional<String> user = Optional.empty();
        Optional<String> password = Optional.empty();
        int at = rest.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = rest.substring(0, at);
            rest = rest.substring(at + 1);
            int colon = userInfo.indexOf(':');
            if (colon < 0) {
                password = Optional.of(decode(userInfo)).filter(p -> !p.isEmpty());
            } else {
                user = Optional.of(decode(userInfo.substring(0, colon))).filter(u -> !u.isEmpty());
                password = Optional.of(decode(userInfo.substring(colon + 1))).filter(p -> !p.isEmpty());
            }
        }
        int database = 0;
        int slash = rest.indexOf('/');
        if (slash >= 0) {
            String db = rest.substring(slash + 1);
            rest = rest.substring(0, slash);
            if (!db.isEmpty()) {
                if (kind == Kind.CLUSTER) {
                    throw new IllegalArgumentException("a Redis Cluster has only database 0");
                }
                try {
                    database = Integer.parseInt(db);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("the database '" + db + "' is not a number");
                }
            }
        }
        int defaultPort = kind == Kind.SENTINEL ? 26379 : 6379;
        List<Node> nodes = new ArrayList<>();
        for (String hostPort : rest.split(",")) {
            nodes.add(node(hostPort.trim(), defaultPort));
        }
        if (kind == Kind.STANDALONE && nodes.size() != 1) {
            throw new IllegalArgumentException("redis:// names one host; use redis-sentinel:// or redis-cluster:// for more");
        }
        if (kind == Kind.SENTINEL && master.isEmpty()) {
            throw new IllegalArgumentException("redis-sentinel:// needs the master's name after '#'");
        }
        return new RedisAddress(kind, List.copyOf(nodes), user, password, database, master, tls);
    }

    private static Node node(String hostPort, int defaultPort) {
        if (hostPort.isEmpty()) {
            throw new IllegalArgumentException("an empty host");
        }
        int colon = hostPort.lastIndexOf(':');
        boolean bracketed = hostPort.startsWith("[");
        if (colon < 0 || (bracketed && colon < hostPort.indexOf(']'))) {
            return new Node(unbracket(hostPort), defaultPort);
        }
        String port = hostPort.substring(colon + 1);
        try {
            int value = Integer.parseInt(port);
            if (value < 1 || value > 65535) {
                throw new NumberFormatException();
            }
            return new Node(unbracket(hostPort.substring(0, colon)), value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("the port '" + port + "' of '" + hostPort + "' is not a port");
        }
    }

    private static String unbracket(String host) {
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    private static String decode(String text) {
        return URLDecoder.decode(text, StandardCharsets.UTF_8);
    }

    /** The address without its credentials, for logs. */
    @Override
    public String toString() {
        StringBuilder out = new StringBuilder(kind.name().toLowerCase(Locale.ROOT)).append(' ');
        for (int i = 0; i < nodes.size(); i++) {
            out.append(i > 0 ? "," : "").append(nodes.get(i).host()).append(':').append(nodes.get(i).port());
        }
        return out.append(master.isEmpty() ? "" : " master " + master).append(database == 0 ? "" : " db " + database)
                .append(tls ? " tls" : "").toString();
    }
}
