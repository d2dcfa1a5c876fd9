package dev.idempotency.architecture;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Size as a symptom: a class that grows past 350 lines has often taken on a second concern. None in src/main passes
 * 500; one past 350 says in its first comment why it is still one thing, in a sentence that starts "One class".
 */
class ClassSizeTest {
    private static final int LIMIT = 500;
    private static final int EXPLAIN_ABOVE = 350;

    @Test
    void noClassIsOverFiveHundredLinesAndOneOverThreeHundredFiftySaysWhyItIsOneThing() throws IOException {
        Map<String, Integer> tooLong = new TreeMap<>();
        Map<String, Integer> unexplained = new TreeMap<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                List<String> lines = Files.readAllLines(file);
                if (lines.size() > LIMIT) {
                    tooLong.put(file.toString(), lines.size());
                } else if (lines.size() > EXPLAIN_ABOVE && !firstComment(lines).contains("One class")) {
                    unexplained.put(file.toString(), lines.size());
                }
            }
        }
        assertThat(tooLong).as("classes over " + LIMIT + " lines").isEmpty();
        assertThat(unexplained).as("classes over " + EXPLAIN_ABOVE + " lines whose first comment does not say why"
                + " they are one thing (\"One class ...\")").isEmpty();
    }

    private static String firstComment(List<String> lines) {
        StringBuilder comment = new StringBuilder();
        boolean inside = false;
        for (String line : lines) {
            String trimmed = line.trim();
            if (!inside && trimmed.startsWith("/**")) {
                inside = true;
            }
            if (inside) {
                comment.append(trimmed.replaceFirst("^/?\\*+/?", "").trim()).append(' ');
                if (trimmed.endsWith("*/")) {
                    break;
                }
            }
        }
        return comment.toString().replaceAll("\\s+", " ");
    }
}
