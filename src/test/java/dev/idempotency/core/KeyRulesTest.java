package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.ProblemType;
import dev.idempotency.testing.Samples;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KeyRulesTest {
    private final KeyRules rules = KeyRules.defaults();

    @Test
    void acceptsPrintableAsciiFromOneTo255Characters() {
        assertThat(rules.parse("a")).isEqualTo("a");
        assertThat(rules.parse("x".repeat(255))).hasSize(255);
        assertThat(rules.parse("!~01J2XYZ-_.:/")).isEqualTo("!~01J2XYZ-_.:/");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "a b", "tab\there", "caf\u00e9", "line\nbreak", "\u007f", "emoji\ud83d\ude00"})
    void rejectsEmptySpacesControlAndNonAscii(String key) {
        assertKeyInvalid(() -> rules.parse(key));
    }

    @Test
    void rejects256Characters() {
        assertKeyInvalid(() -> rules.parse("x".repeat(256)));
    }

    @Test
    void structuredFieldStringMeansTheSameKey() {
        assertThat(rules.parse("\"abc\"")).isEqualTo(rules.parse("abc"));
        assertThat(rules.parse("\"a\\\"b\\\\c\"")).isEqualTo("a\"b\\c");
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"", "\"abc", "\"\"", "\"a\\b\"", "\"a\"b\"", "\"abc\\\"", "\"a b\""})
    void rejectsMalformedOrEmptyStructuredFieldStrings(String raw) {
        assertKeyInvalid(() -> rules.parse(raw));
    }

    @Test
    void aRepeatedHeaderIsInvalidAndAnAbsentOneIsNoKey() {
        assertKeyInvalid(() -> rules.fromHeader(List.of("a", "b")));
        assertThat(rules.fromHeader(List.of())).isNull();
        assertThat(rules.fromHeader(null)).isNull();
    }

    @Test
    void configuredLengthsAndPatternApply() {
        KeyRules strict = new KeyRules(16, 64, Pattern.compile("[0-9A-Z]+"));
        assertKeyInvalid(() -> strict.parse("SHORT"));
        assertKeyInvalid(() -> strict.parse("lowercase-is-not-allowed-here"));
        assertThat(strict.parse("01J2ABCDEFGHJKMNPQ")).isEqualTo("01J2ABCDEFGHJKMNPQ");
    }

    @Test
    void businessFieldKeysAreValidatedButNeverUnquoted() {
        assertThat(rules.validate("\"A-1\"")).isEqualTo("\"A-1\"");
        assertKeyInvalid(() -> rules.validate("A 1"));
    }

    @Test
    void everyPrintableAsciiKeyIsAcceptedUnchanged() {
        Samples.check(random -> {
            String key = Samples.string(random, 1, 255, '!', '~');
            if (!key.startsWith("\"")) {
                assertThat(rules.parse(key)).isEqualTo(key);
            }
        });
    }

    @Test
    void quotingAnyKeyOfSafeCharactersGivesTheSameKey() {
        Samples.check(random -> {
            String key = Samples.string(random, 1, 200, '!', '~');
            String quoted = "\"" + key.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
            assertThat(rules.parse(quoted)).isEqualTo(key);
        });
    }

    private static void assertKeyInvalid(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOf(IdempotencyException.class)
                .satisfies(e -> assertThat(((IdempotencyException) e).problem().type()).isEqualTo(ProblemType.KEY_INVALID))
                .satisfies(e -> assertThat(((IdempotencyException) e).problem().status()).isEqualTo(400));
    }
}
