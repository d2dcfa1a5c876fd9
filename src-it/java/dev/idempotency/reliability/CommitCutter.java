package dev.idempotency.reliability;

import org.netcrusher.core.reactor.NioReactor;
import org.netcrusher.tcp.TcpCrusher;
import org.netcrusher.tcp.TcpCrusherBuilder;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/**
 * A TCP proxy (NetCrusher) between a node's datasource and PostgreSQL that, once armed, cuts the connection
 * of one chosen transaction at its COMMIT: either the COMMIT reaches the database (which commits) and its
 * answer is lost, or the COMMIT itself is lost (the database rolls back when the connection closes). Either
 * way the node cannot know the outcome. The transaction is chosen by the statements it sent since its
 * previous COMMIT or ROLLBACK (e.g. it inserted into demo_payment).
 */
final class CommitCutter implements AutoCloseable {
    private final NioReactor reactor;
    private final TcpCrusher crusher;
    private final ScheduledExecutorService cutter = Executors.newSingleThreadScheduledExecutor();
    /** Per connection: what the client sent since its last transaction end (Latin-1, protocol framing included). */
    private final Map<InetSocketAddress, StringBuilder> transactions = new ConcurrentHashMap<>();
    /** Connections whose answers are swallowed until they are cut. */
    private final Map<InetSocketAddress, Boolean> muted = new ConcurrentHashMap<>();
    private final AtomicReference<Predicate<String>> armed = new AtomicReference<>();
    private volatile boolean deliverCommit;
    private final AtomicInteger cuts = new AtomicInteger();

    CommitCutter(int port, String host, int targetPort) throws IOException {
        reactor = new NioReactor();
        crusher = TcpCrusherBuilder.builder().withReactor(reactor)
                .withBindAddress("127.0.0.1", port)
                .withConnectAddress(host, targetPort)
                // client -> database
                .withOutgoingTransformFilterFactory(client -> bytes -> watch(client, bytes))
                // database -> client
                .withIncomingTransformFilterFactory(client -> bytes -> {
                    if (muted.containsKey(client)) {
                        bytes.position(bytes.limit());
                    }
                })
                .withDeletionListener((client, meters) -> {
                    transactions.remove(client);
                    muted.remove(client);
                })
                .buildAndOpen();
    }

    /**
     * The next COMMIT of a transaction whose statements match is delivered to the database (or, with
     * {@code deliverCommit} false, dropped), its answer never comes back, and its connection is cut.
     */
    void armFor(Predicate<String> transaction, boolean deliverCommit) {
        this.deliverCommit = deliverCommit;
        armed.set(transaction);
    }

    /** How many commits were cut so far. */
    int cuts() {
        return cuts.get();
    }

    private void watch(InetSocketAddress client, ByteBuffer bytes) {
        ByteBuffer view = bytes.duplicate();
        byte[] data = new byte[view.remaining()];
        view.get(data);
        StringBuilder tx = transactions.computeIfAbsent(client, c -> new StringBuilder());
        tx.append(new String(data, StandardCharsets.ISO_8859_1));
        String sent = tx.toString();
        boolean ends = sent.contains("COMMIT") || sent.contains("ROLLBACK");
        if (!ends) {
            return;
        }
        Predicate<String> target = armed.get();
        if (sent.contains("COMMIT") && target != null && target.test(sent) && armed.compareAndSet(target, null)) {
            // The COMMIT goes on to the database, or not; its answer does not come back; the connection dies soon.
            if (!deliverCommit) {
                bytes.position(bytes.limit());
            }
            muted.put(client, Boolean.TRUE);
            cuts.incrementAndGet();
            cutter.schedule(() -> crusher.closeClient(client), 300, TimeUnit.MILLISECONDS);
        }
        tx.setLength(0);
    }

    @Override
    public void close() {
        cutter.shutdownNow();
        crusher.close();
        reactor.close();
    }
}
