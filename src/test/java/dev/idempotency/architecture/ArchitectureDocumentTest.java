package dev.idempotency.architecture;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** docs/architecture.md stays true: every class it names (in backticks) exists in the sources, nested ones too. */
class ArchitectureDocumentTest {
    // `Name`, `Outer.Inner`, `Name.method(...)`: the leading type names.
    private static final Pattern NAMED = Pattern.compile("`@?([A-Z][A-Za-z0-9]*(?:\\.[A-Z][A-Za-z0-9]*)*)");

    @Test
    void everyClassTheArchitecturePageNamesExists() throws IOException {
        String page = Files.readString(Path.of("docs/architecture.md"));
        Set<String> named = new TreeSet<>();
        Matcher m = NAMED.matcher(page);
        while (m.find()) {
            named.add(m.group(1));
        }
        assertThat(named).as("the page names classes").hasSizeGreaterThan(30);
        List<String> missing = new ArrayList<>();
        for (String name : named) {
            if (find(name).isEmpty()) {
                missing.add(name);
            }
        }
        assertThat(missing).as("named in docs/architecture.md but not found in src/main or src/test").isEmpty();
    }

    // The top-level type's file, containing every nested type the name goes through.
    private static Optional<Path> find(String dotted) throws IOException {
        String[] parts = dotted.split("\\.");
        for (Path root : List.of(Path.of("src/main/java"), Path.of("src/test/java"))) {
            try (Stream<Path> files = Files.walk(root)) {
                Optional<Path> file = files.filter(p -> p.getFileName().toString().equals(parts[0] + ".java"))
                        .findFirst();
                if (file.isPresent() && nestedTypesDeclared(Files.readString(file.get()), parts)) {
                    return file;
                }
            }
        }
        return Optional.empty();
    }

    private static boolean nestedTypesDeclared(String source, String[] parts) {
        for (int i = 1; i < parts.length; i++) {
            if (!Pattern.compile("\\b(class|interface|record|enum) " + parts[i] + "\\b").matcher(source).find()) {
                return false;
            }
        }
        return true;
    }
}
