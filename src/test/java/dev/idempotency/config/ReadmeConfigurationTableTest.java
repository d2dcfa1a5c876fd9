package dev.idempotency.config;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's configuration table lists exactly the settings, with their defaults. */
class ReadmeConfigurationTableTest {
    private static final Pattern ROW = Pattern.compile("^\\| `(idempotency\\.[^`]+)` \\| ([^|]+) \\| (yes|no) \\|", Pattern.MULTILINE);

    @Test
    void everySettingIsDocumentedWithItsDefault() throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        Matcher rows = ROW.matcher(readme);
        List<String> documented = new java.util.ArrayList<>();
        while (rows.find()) {
            Setting setting = Arrays.stream(Setting.values()).filter(s -> s.key().equals(rows.group(1))).findFirst()
                    .orElseThrow(() -> new AssertionError("README documents an unknown setting " + rows.group(1)));
            String shown = rows.group(2).trim();
            String expected = setting.defaultValue() == null ? "(required)"
                    : setting.defaultValue().isEmpty() ? "(empty)" : "`" + setting.defaultValue() + "`";
            assertThat(shown).as(setting.key()).isEqualTo(expected);
            assertThat(rows.group(3)).as(setting.key() + " per endpoint").isEqualTo(setting.perEndpoint() ? "yes" : "no");
            documented.add(setting.key());
        }
        assertThat(documented).containsExactlyInAnyOrderElementsOf(Arrays.stream(Setting.values()).map(Setting::key).toList());
    }
}
