package dev.idempotency.bench.jmh;

import dev.idempotency.core.CanonicalJson;
import dev.idempotency.core.Fingerprinter;
import dev.idempotency.core.RequestFacts;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * What every idempotent request pays before the database: the fingerprint of its JSON body (canonical
 * JSON, then HMAC-SHA-256), for a 1 KB and a 64 KB body. Run with {@code -prof gc} (bench/jmh.sh) for the
 * bytes allocated per fingerprint ({@code gc.alloc.rate.norm}).
 *
 * <p>Only the library's public core types are named. The canonical JSON implementation is found by its
 * class name ({@code -p canonicalJson=...}), so that this compiles whatever the library does with it.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class FingerprintBenchmark {
    /** Size of the JSON body, in bytes (the body is a little larger: whole items are added). */
    @Param({"1024", "65536"})
    public int bodyBytes;

    /** The {@link CanonicalJson} implementation, built with its no-argument constructor. */
    @Param({"dev.idempotency.json.JacksonCanonicalJson"})
    public String canonicalJson;

    private Fingerprinter fingerprinter;
    private RequestFacts facts;
    private final Set<String> ignored = Set.of("traceId");
    private final Map<String, String> defaults = Map.of();

    @Setup
    public void setUp() throws ReflectiveOperationException {
        CanonicalJson json = (CanonicalJson) Class.forName(canonicalJson).getConstructor().newInstance();
        byte[] secret = "benchmark secret of at least thirty-two bytes".getBytes(StandardCharsets.UTF_8);
        fingerprinter = new Fingerprinter(secret, List.of(), json);
        facts = new RequestFacts("POST", "/api/payments", "application/json", "", "alice", PaymentBodies.of(bodyBytes));
    }

    @Benchmark
    public String fingerprint() {
        return fingerprinter.fingerprint(facts, ignored, defaults).value();
    }
}
