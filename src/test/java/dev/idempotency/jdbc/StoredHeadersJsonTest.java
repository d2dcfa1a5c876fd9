package dev.idempotency.jdbc;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idempotency.testing.Samples;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The stored response headers' JSON, written by hand and read back by Jackson, as earlier versions wrote it. */
class StoredHeadersJsonTest {

    @Test
    void ordinaryHeadersAreWrittenAsJacksonWroteThem() throws Exception {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        headers.put("Location", List.of("https://pay.example/payments/42"));
        headers.put("Content-Type", List.of("application/json"));
        headers.put("Link", List.of("</a>; rel=\"next\"", "</b>; rel=\"prev\""));
        headers.put("X-Empty", List.of());

        String written = RecordRows.headersJson(headers);

        assertThat(written).isEqualTo(new ObjectMapper().writeValueAsString(headers));
        assertThat(RecordRows.headers(written)).isEqualTo(headers);
    }

    @Test
    void everyCharacterSurvivesTheRoundTrip() {
        Samples.check(random -> {
            Map<String, List<String>> headers = new LinkedHashMap<>();
            for (int h = random.nextInt(4); h >= 0; h--) {
                headers.put(text(random) + h, List.of(text(random), text(random)));
            }
            assertThat(RecordRows.headers(RecordRows.headersJson(headers))).isEqualTo(headers);
        });
    }

    @Test
    void aLoneSurrogateIsEscapedAndAPairIsKept() {
        String json = RecordRows.headersJson(Map.of("X", List.of("a\ud800b", "\ud83d\ude00", "\u0001\"\\")));

        assertThat(json).isEqualTo("{\"X\":[\"a\\ud800b\",\"\ud83d\ude00\",\"\\u0001\\\"\\\\\"]}");
        assertThat(RecordRows.headers(json).get("X")).containsExactly("a\ud800b", "\ud83d\ude00", "\u0001\"\\");
    }

    // Control characters, quotes, backslashes, Latin-1, the basic plane and a supplementary character.
    private static String text(java.util.Random random) {
        StringBuilder out = new StringBuilder();
        for (int i = random.nextInt(12); i > 0; i--) {
            switch (random.nextInt(6)) {
                case 0 -> out.append((char) random.nextInt(0x20));
                case 1 -> out.append(random.nextBoolean() ? '"' : '\\');
                case 2 -> out.append((char) (0xa0 + random.nextInt(0x60)));
                case 3 -> out.append((char) (0x3000 + random.nextInt(0x1000)));
                case 4 -> out.appendCodePoint(0x1f600 + random.nextInt(0x40));
                default -> out.append((char) ('a' + random.nextInt(26)));
            }
        }
        return out.toString();
    }
}
