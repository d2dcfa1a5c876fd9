package dev.idempotency.json;

import dev.idempotency.core.CanonicalJson.MalformedBodyException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
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

    @Property
    void numberSpellingsOfOneValueAreEqual(@ForAll("decimals") BigDecimal value, @ForAll("scales") int extraZeros) {
        BigDecimal respelled = value.setScale(value.scale() + extraZeros);
        String exponent = value.unscaledValue() + "E" + (-value.scale());
        String plain = canon("[" + value.toPlainString() + "]");
        assertThat(canon("[" + respelled.toPlainString() + "]")).isEqualTo(plain);
        assertThat(canon("[" + exponent + "]")).isEqualTo(plain);
    }

    @Property
    void distinctNumbersStayDistinct(@ForAll("decimals") BigDecimal a, @ForAll("decimals") BigDecimal b) {
        boolean same = a.compareTo(b) == 0;
        assertThat(canon("[" + a.toPlainString() + "]").equals(canon("[" + b.toPlainString() + "]"))).isEqualTo(same);
    }

    @Property
    void memberOrderNeverMatters(@ForAll("objects") List<Map.Entry<String, Integer>> members, @ForAll long seed) {
        List<Map.Entry<String, Integer>> shuffled = new ArrayList<>(members);
        Collections.shuffle(shuffled, new Random(seed));
        assertThat(canon(object(shuffled))).isEqualTo(canon(object(members)));
    }

    @Property
    void canonicalFormIsAFixedPoint(@ForAll("objects") List<Map.Entry<String, Integer>> members) {
        String once = canon(object(members));
        assertThat(canon(once)).isEqualTo(once);
    }

    @Provide
    Arbitrary<BigDecimal> decimals() {
        return Arbitraries.bigIntegers().between(BigInteger.valueOf(-1_000_000_000L), BigInteger.valueOf(1_000_000_000L))
                .flatMap(unscaled -> Arbitraries.integers().between(-6, 12).map(scale -> new BigDecimal(unscaled, scale)));
    }

    @Provide
    Arbitrary<Integer> scales() {
        return Arbitraries.integers().between(0, 8);
    }

    @Provide
    Arbitrary<List<Map.Entry<String, Integer>>> objects() {
        return Arbitraries.strings().ofMinLength(1).ofMaxLength(6).withCharRange('a', 'z').withChars('\u00e9', '\ud7ff')
                .flatMap(name -> Arbitraries.integers().map(v -> Map.entry(name, v)))
                .list().ofMaxSize(8).uniqueElements(Map.Entry::getKey);
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
