package dev.idempotency.json;

import dev.idempotency.core.CanonicalJson.MalformedBodyException;
import dev.idempotency.testing.Samples;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JacksonCanonicalJsonTest {
    private final JacksonCanonicalJson json = new JacksonCanonicalJson();

    @Test
    void sortsKeysAndRemovesWhitespace() {
        assertThat(canon("{ \"b\" : [1, {\"d\":true, \"c\":null}], \"a\" : \"x\" }"))
                .isEqualTo("{\"a\":\"x\",\"b\":[1,{\"c\":null,\"d\":true}]}");
    }

    @Test
    void numbersAreWrittenByValue() {
        assertThat(canon("[100, 100.0, 1E2, 1e+2, 100.00000, 10e1]")).isEqualTo("[100,100,100,100,100,100]");
        assertThat(canon("[-0, 0.0, 0e5]")).isEqualTo("[0,0,0]");
        assertThat(canon("[0.10, 1.5e-3, 1e22, -15e-31]")).isEqualTo("[0.1,0.0015,1e22,-15e-31]");
    }

    @Test
    void distinctValuesStayDistinct() {
        assertThat(canon("[0.1]")).isNotEqualTo(canon("[0.10000000000000001]"));
        assertThat(canon("{\"a\":1}")).isNotEqualTo(canon("{\"a\":\"1\"}"));
        assertThat(canon("[1,2]")).isNotEqualTo(canon("[2,1]"));
        assertThat(canon("{\"a\":null}")).isNotEqualTo(canon("{}"));
        assertThat(canon("{\"a\":\"\\u00e9\"}")).isEqualTo(canon("{\"a\":\"\u00e9\"}"));
    }

    @Test
    void ignoredFieldsGoAndDefaultsApply() {
        String out = new String(json.canonicalize(bytes("{\"traceId\":\"t\",\"meta\":{\"trace\":1,\"k\":2},\"a\":1}"),
                Set.of("traceId", "meta.trace"), Map.of("currency", "\"EUR\"")), StandardCharsets.UTF_8);
        assertThat(out).isEqualTo("{\"a\":1,\"currency\":\"EUR\",\"meta\":{\"k\":2}}");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "{", "{\"a\":1,\"a\":2}", "{'a':1}", "[1,]", "NaN", "01", "{} {}", "[1] x",
            "{\"a\":1}/*c*/", "\"\\x\""})
    void malformedJsonIsRefused(String body) {
        assertThatThrownBy(() -> json.canonicalize(bytes(body), Set.of(), Map.of()))
                .isInstanceOf(MalformedBodyException.class);
    }

    @Test
    void invalidUtf8DeepNestingAndHugeExponentsAreRefused() {
        assertThatThrownBy(() -> json.canonicalize(new byte[] {'"', (byte) 0xC3, '"'}, Set.of(), Map.of()))
                .isInstanceOf(MalformedBodyException.class);
        assertThatThrownBy(() -> json.canonicalize(bytes("[".repeat(100) + "]".repeat(100)), Set.of(), Map.of()))
                .isInstanceOf(MalformedBodyException.class);
        assertThatThrownBy(() -> json.canonicalize(bytes("[1" + "0".repeat(2000) + "]"), Set.of(), Map.of()))
                .isInstanceOf(MalformedBodyException.class);
    }

    @Test
    void errorMessagesDoNotQuoteTheBody() {
        assertThatThrownBy(() -> json.canonicalize(bytes("{\"card\":\"4111111111111111\" oops}"), Set.of(), Map.of()))
                .isInstanceOf(MalformedBodyException.class)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("4111111111111111"));
    }

    @Test
    void scalarFieldReadsABusinessKey() {
        assertThat(json.scalarField(bytes("{\"order\":{\"no\":\"A-1\"}}"), "order.no")).contains("A-1");
        assertThat(json.scalarField(bytes("{\"no\":1200.0}"), "no")).contains("1200");
        assertThat(json.scalarField(bytes("{\"no\":null}"), "no")).isEmpty();
        assertThat(json.scalarField(bytes("{}"), "no")).isEmpty();
        assertThatThrownBy(() -> json.scalarField(bytes("{\"no\":{}}"), "no")).isInstanceOf(MalformedBodyException.class);
    }

    @Test
    void numberSpellingsOfOneValueAreEqual() {
        Samples.check(random -> {
            BigDecimal value = decimal(random);
            BigDecimal respelled = value.setScale(value.scale() + Samples.between(random, 0, 8));
            String exponent = value.unscaledValue() + "E" + (-value.scale());
            String plain = canon("[" + value.toPlainString() + "]");
            assertThat(canon("[" + respelled.toPlainString() + "]")).isEqualTo(plain);
            assertThat(canon("[" + exponent + "]")).isEqualTo(plain);
        });
    }

    @Test
    void distinctNumbersStayDistinct() {
        Samples.check(random -> {
            BigDecimal a = decimal(random);
            // Every fourth pair is one value spelled twice, so that both outcomes are checked.
            BigDecimal b = random.nextInt(4) == 0 ? a.setScale(a.scale() + 2) : decimal(random);
            boolean same = a.compareTo(b) == 0;
            assertThat(canon("[" + a.toPlainString() + "]").equals(canon("[" + b.toPlainString() + "]")))
                    .as("%s vs %s", a, b).isEqualTo(same);
        });
    }

    @Test
    void memberOrderNeverMatters() {
        Samples.check(random -> {
            List<Map.Entry<String, Integer>> members = members(random);
            List<Map.Entry<String, Integer>> shuffled = new ArrayList<>(members);
            Collections.shuffle(shuffled, random);
            assertThat(canon(object(shuffled))).isEqualTo(canon(object(members)));
        });
    }

    @Test
    void canonicalFormIsAFixedPoint() {
        Samples.check(random -> {
            String once = canon(object(members(random)));
            assertThat(canon(once)).isEqualTo(once);
        });
    }

    // -10^9..10^9 unscaled, scale -6..12: integers, fractions and exponents both ways.
    private static BigDecimal decimal(Random random) {
        BigInteger unscaled = BigInteger.valueOf(random.nextLong() % 1_000_000_001L);
        return new BigDecimal(unscaled, Samples.between(random, -6, 12));
    }

    // Up to 8 members with distinct names of 1..6 characters: ASCII letters, an accented letter, and a
    // character near the top of the basic plane.
    private static List<Map.Entry<String, Integer>> members(Random random) {
        int size = random.nextInt(9);
        Map<String, Integer> byName = new java.util.LinkedHashMap<>();
        while (byName.size() < size) {
            StringBuilder name = new StringBuilder();
            for (int i = Samples.between(random, 1, 6); i > 0; i--) {
                int pick = random.nextInt(28);
                name.append(pick < 26 ? (char) ('a' + pick) : pick == 26 ? '\u00e9' : '\ud7ff');
            }
            byName.putIfAbsent(name.toString(), random.nextInt());
        }
        return new ArrayList<>(byName.entrySet());
    }

    private static String object(List<Map.Entry<String, Integer>> members) {
        StringBuilder out = new StringBuilder("{");
        for (Map.Entry<String, Integer> m : members) {
            if (out.length() > 1) {
                out.append(" , ");
            }
            out.append('"').append(m.getKey()).append("\": ").append(m.getValue());
        }
        return out.append('}').toString();
    }

    private String canon(String body) {
        return new String(json.canonicalize(bytes(body), Set.of(), Map.of()), StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
