package dev.idempotency.architecture;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fault suite's Byteman rules (src-it) name the library's classes and methods as text: a rule whose class or
 * method was renamed is never triggered, and its scenario fails on a real server half an hour into the test command.
 * This finds such a rule in the fast tests.
 */
class FaultRulesTest {
    private static final Pattern TARGET = Pattern.compile("CLASS (dev\\.idempotency\\.[\\w.]+)\\s+METHOD (\\w+)");
    private static final Pattern INVOKED = Pattern.compile("INVOKE (dev\\.idempotency\\.[\\w.]+)\\.(\\w+)");

    @Test
    void everyClassAndMethodARuleOfTheFaultSuiteNamesExists() throws IOException {
        List<String> rules = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of("src-it/java"))) {
            for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                rules.add(Files.readString(file));
            }
        }
        List<String> named = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        for (String source : rules) {
            for (Pattern pattern : List.of(TARGET, INVOKED)) {
                Matcher m = pattern.matcher(source);
                while (m.find()) {
                    named.add(m.group(1) + "." + m.group(2));
                    if (!declares(m.group(1), m.group(2))) {
                        missing.add(m.group(1) + "." + m.group(2));
                    }
                }
            }
        }
        assertThat(named).as("the fault suite has rules on the library's code").isNotEmpty();
        assertThat(missing).as("rules on classes or methods that do not exist").isEmpty();
    }

    private static boolean declares(String type, String method) {
        try {
            return Arrays.stream(Class.forName(type).getDeclaredMethods()).map(Method::getName).anyMatch(method::equals);
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
