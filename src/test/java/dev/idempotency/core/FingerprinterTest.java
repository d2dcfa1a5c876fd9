package dev.idempotency.core;

import dev.idempotency.json.JacksonCanonicalJson;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FingerprinterTest {
    private static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);
    private static final byte[] OLD_SECRET = "an older secret of thirty-two bytes!".getBytes(StandardCharsets.UTF_8);
    private static final String GOLDEN_A1 = "v1:4490c7d87c71fdc9641c9cfb345e83b631e747d8234011116faa44d37e83a6e7";
    private final Fingerprinter fingerprinter = new Fingerprinter(SECRET, List.of(), new JacksonCanonicalJson());

    @Test
    void valueIsVersionedHmacHex() {
        assertThat(fp(post("{\"a\":1}")).value()).matches("v1:[0-9a-f]{64}");
    }

    // A request without a query string fingerprints as before the query was added (computed by 0.1.0 builds
    // up to ab36777): records stored by an earlier instance keep matching during a rolling upgrade.
    @Test
    void aRequestWithoutQueryKeepsTheValueEarlierBuildsStored() {
        assertThat(fp(post("{\"a\":1}")).value()).isEqualTo(GOLDEN_A1);
        RequestFacts withQuery = new RequestFacts("POST", "/api/payments", "application/json", "", "acme/alice",
                "{\"a\":1}".getBytes(StandardCharsets.UTF_8), "dryRun=true");
        assertThat(fp(withQuery).value()).isNotEqualTo(GOLDEN_A1);
    }

    @Test
    void threadsSharingOneFingerprinterGetTheSameValuesAsOneThread() throws Exception {
        // Every fingerprint works on a clone of one keyed MAC per secret: a clone that shared state with
        // the prototype or with another clone would mix requests.
        List<String> bodies = java.util.stream.IntStream.range(0, 64).mapToObj(i -> "{\"n\":" + i + "}").toList();
        List<String> expected = bodies.stream().map(b -> fp(post(b)).value()).toList();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
        try {
            List<java.util.concurrent.Future<List<String>>> results = new java.util.ArrayList<>();
            for (int t = 0; t < 8; t++) {
                results.add(pool.submit(() -> {
                    start.await();
                    List<String> seen = new java.util.ArrayList<>();
                    for (int round = 0; round < 50; round++) {
                        for (String body : bodies) {
                            seen.add(fp(post(body)).value());
                        }
                    }
                    return seen;
                }));
            }
            start.countDown();
            for (java.util.concurrent.Future<List<String>> result : results) {
                List<String> seen = result.get(60, java.util.concurrent.TimeUnit.SECONDS);
                for (int i = 0; i < seen.size(); i++) {
                    assertThat(seen.get(i)).isEqualTo(expected.get(i % bodies.size()));
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void keyOrderWhitespaceAndNumberSpellingDoNotChangeIt() {
        String first = fp(post("{\"amount\":100,\"currency\":\"EUR\"}")).value();
        assertThat(fp(post("{ \"currency\" : \"EUR\",\n \"amount\" : 100.0 }")).matches(first)).isTrue();
        assertThat(fp(post("{\"currency\":\"EUR\",\"amount\":1E2}")).matches(first)).isTrue();
        assertThat(fp(post("{\"currency\":\"EUR\",\"amount\":1e+2}")).matches(first)).isTrue();
    }

    @Test
    void ignoredFieldsDoNotChangeItAndOtherFieldsDo() {
        Set<String> ignored = Set.of("traceId");
        String first = fingerprinter.fingerprint(post("{\"amount\":100,\"traceId\":\"t1\"}"), ignored, Map.of()).value();
        assertThat(fingerprinter.fingerprint(post("{\"amount\":100,\"traceId\":\"t2\"}"), ignored, Map.of()).matches(first)).isTrue();
        assertThat(fingerprinter.fingerprint(post("{\"amount\":100}"), ignored, Map.of()).matches(first)).isTrue();
        assertThat(fingerprinter.fingerprint(post("{\"amount\":101,\"traceId\":\"t1\"}"), ignored, Map.of()).matches(first)).isFalse();
        assertThat(fingerprinter.fingerprint(post("{\"amount\":100,\"note\":\"x\"}"), ignored, Map.of()).matches(first)).isFalse();
    }

    @Test
    void defaultsMakeAnAbsentFieldEqualToItsDefault() {
        Map<String, String> defaults = Map.of("currency", "\"EUR\"");
        String explicit = fingerprinter.fingerprint(post("{\"amount\":1,\"currency\":\"EUR\"}"), Set.of(), defaults).value();
        assertThat(fingerprinter.fingerprint(post("{\"amount\":1}"), Set.of(), defaults).matches(explicit)).isTrue();
        assertThat(fingerprinter.fingerprint(post("{\"amount\":1,\"currency\":\"USD\"}"), Set.of(), defaults).matches(explicit)).isFalse();
    }

    @Test
    void everyRequestFactIsCovered() {
        RequestFacts base = post("{}");
        String value = fp(base).value();
        assertThat(fp(new RequestFacts("PUT", base.path(), base.contentType(), "", base.principal(), base.body())).matches(value)).isFalse();
        assertThat(fp(new RequestFacts("POST", "/other", base.contentType(), "", base.principal(), base.body())).matches(value)).isFalse();
        assertThat(fp(new RequestFacts("POST", base.path(), "application/vnd.x+json", "", base.principal(), base.body())).matches(value)).isFalse();
        assertThat(fp(new RequestFacts("POST", base.path(), base.contentType(), "2", base.principal(), base.body())).matches(value)).isFalse();
        assertThat(fp(new RequestFacts("POST", base.path(), base.contentType(), "", "acme/bob", base.body())).matches(value)).isFalse();
        // Media type parameters and case do not change the meaning of the body.
        assertThat(fp(new RequestFacts("POST", base.path(), "Application/JSON; charset=UTF-8", "", base.principal(), base.body())).matches(value)).isTrue();
    }

    @Test
    void nonJsonBodiesAreFingerprintedAsBytes() {
        RequestFacts a = new RequestFacts("POST", "/p", "text/plain", "", "u", "a b".getBytes(StandardCharsets.UTF_8));
        RequestFacts b = new RequestFacts("POST", "/p", "text/plain", "", "u", "a  b".getBytes(StandardCharsets.UTF_8));
        assertThat(fp(b).matches(fp(a).value())).isFalse();
        assertThat(fp(a).matches(fp(a).value())).isTrue();
    }

    @Test
    void anotherSecretGivesAnotherFingerprint() {
        Fingerprinter other = new Fingerprinter(OLD_SECRET, List.of(), new JacksonCanonicalJson());
        assertThat(other.fingerprint(post("{}"), Set.of(), Map.of()).matches(fp(post("{}")).value())).isFalse();
    }

    @Test
    void aFingerprintMadeUnderAPreviousSecretStillMatchesAfterRotation() {
        Fingerprinter before = new Fingerprinter(OLD_SECRET, List.of(), new JacksonCanonicalJson());
        String stored = before.fingerprint(post("{\"a\":1}"), Set.of(), Map.of()).value();
        Fingerprinter rotated = new Fingerprinter(SECRET, List.of(OLD_SECRET), new JacksonCanonicalJson());
        assertThat(rotated.fingerprint(post("{\"a\":1}"), Set.of(), Map.of()).matches(stored)).isTrue();
        assertThat(rotated.fingerprint(post("{\"a\":2}"), Set.of(), Map.of()).matches(stored)).isFalse();
        assertThat(rotated.fingerprint(post("{\"a\":1}"), Set.of(), Map.of()).value()).isNotEqualTo(stored);
    }

    @Test
    void aStoredFingerprintNamesItsRulesAndIsComparedUnderThem() {
        FingerprintRules before = new FingerprintRules(Set.of(), Map.of(), true, ApiVersionSource.NONE);
        FingerprintRules after = new FingerprintRules(Set.of("note"), Map.of(), true, ApiVersionSource.NONE);
        RequestFacts request = post("{\"a\":1,\"note\":\"x\"}");
        String stored = fingerprinter.fingerprint(request, before, Map.of()).stored();
        assertThat(stored).isEqualTo(fingerprinter.fingerprint(request, before, Map.of()).value() + ":" + before.id());

        Fingerprinter.RequestFingerprint alone = fingerprinter.fingerprint(request, after, Map.of());
        assertThat(alone.match(stored)).isEqualTo(Fingerprinter.Match.RULES_UNKNOWN);
        Fingerprinter.RequestFingerprint accepting = fingerprinter.fingerprint(request, after, Map.of(before, () -> request));
        assertThat(accepting.match(stored)).isEqualTo(Fingerprinter.Match.SAME);
        RequestFacts other = post("{\"a\":2,\"note\":\"x\"}");
        assertThat(fingerprinter.fingerprint(other, after, Map.of(before, () -> other)).match(stored))
                .isEqualTo(Fingerprinter.Match.DIFFERENT);
        // A value stored before rules were named was made under the rules then in force: compared under the current.
        assertThat(fingerprinter.fingerprint(request, before, Map.of()).match(alone.value()))
                .isEqualTo(Fingerprinter.Match.DIFFERENT);
        assertThat(alone.match(alone.value())).isEqualTo(Fingerprinter.Match.SAME);
    }

    @Test
    void anotherVersionPrefixNeverMatches() {
        String value = fp(post("{}")).value();
        assertThat(fp(post("{}")).matches("v0:" + value.substring(3))).isFalse();
        assertThat(fp(post("{}")).matches(null)).isFalse();
    }

    @Test
    void malformedJsonIsRefusedAndShortSecretsAreRejected() {
        assertThatThrownBy(() -> fp(post("{\"a\":1,\"a\":2}"))).isInstanceOf(CanonicalJson.MalformedBodyException.class);
        assertThatThrownBy(() -> fp(post("{\"a\":"))).isInstanceOf(CanonicalJson.MalformedBodyException.class);
        assertThatThrownBy(() -> new Fingerprinter(new byte[31], List.of(), new JacksonCanonicalJson()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private Fingerprinter.RequestFingerprint fp(RequestFacts facts) {
        return fingerprinter.fingerprint(facts, Set.of(), Map.of());
    }

    private static RequestFacts post(String json) {
        return new RequestFacts("POST", "/api/payments", "application/json", "", "acme/alice",
                json.getBytes(StandardCharsets.UTF_8));
    }
}
