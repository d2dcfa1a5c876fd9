package dev.idempotency.json;

import dev.idempotency.core.Redaction;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JsonRedactorTest {
    private static final String PAYMENT = "{\"id\":\"p-1\",\"amount\":12.50,\"card\":{\"number\":\"4111111111111111\","
            + "\"expiry\":\"12/29\"},\"items\":[{\"sku\":\"a\",\"cvv\":\"123\"},{\"sku\":\"b\"},7],"
            + "\"tokens\":[\"t1\",\"t2\"]}";
    private final JsonRedactor redactor = new JsonRedactor();

    @Test
    void maskedFieldsKeepTheirPlaceAndEverythingElseIsAsWritten() {
        assertThat(redact(PAYMENT, Redaction.Mode.MASK, "card.number", "items[].cvv", "tokens[]"))
                .isEqualTo("{\"id\":\"p-1\",\"amount\":12.50,\"card\":{\"number\":\"***\",\"expiry\":\"12/29\"},"
                        + "\"items\":[{\"sku\":\"a\",\"cvv\":\"***\"},{\"sku\":\"b\"},7],\"tokens\":[\"***\",\"***\"]}");
    }

    @Test
    void removedFieldsAreGone() {
        assertThat(redact(PAYMENT, Redaction.Mode.REMOVE, "card", "items[].cvv", "tokens[]"))
                .isEqualTo("{\"id\":\"p-1\",\"amount\":12.50,\"items\":[{\"sku\":\"a\"},{\"sku\":\"b\"},7],\"tokens\":[]}");
    }

    @Test
    void aPathThatLeadsNowhereChangesNothing() {
        String body = "{\"card\":\"none\",\"items\":{\"cvv\":\"1\"},\"list\":[1,2]}";
        assertThat(redact(body, Redaction.Mode.MASK, "card.number", "items[].cvv", "absent", "list[].x"))
                .isEqualTo(body);
        assertThat(redact("[{\"card\":1}]", Redaction.Mode.MASK, "card")).as("a top-level array has no members")
                .isEqualTo("[{\"card\":1}]");
    }

    @Test
    void aBodyThatIsNotJsonIsNotKept() {
        assertThat(redactor.redact("not json".getBytes(StandardCharsets.UTF_8),
                new Redaction(List.of("a"), Redaction.Mode.MASK))).isEmpty();
        assertThat(redactor.redact("{\"a\":1} trailing".getBytes(StandardCharsets.UTF_8),
                new Redaction(List.of("a"), Redaction.Mode.MASK))).isEmpty();
    }

    @Test
    void pathsAreCheckedAtDeployment() {
        JsonRedactor.validate(List.of("a", "a.b", "a[].b", "a[]"));
        for (String bad : List.of("", "a..b", "a.", "[]", "a[0].b", "a[].[]")) {
            assertThatThrownBy(() -> JsonRedactor.validate(List.of(bad))).as(bad)
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    private String redact(String json, Redaction.Mode mode, String... paths) {
        return new String(redactor.redact(json.getBytes(StandardCharsets.UTF_8), new Redaction(List.of(paths), mode))
                .orElseThrow(), StandardCharsets.UTF_8);
    }
}
