package dev.idempotency.reliability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/** Appends one scenario's figures to target/reliability-report.md. */
final class Report {
    private static final Path FILE = Path.of("target/reliability-report.md");

    static synchronized void write(String scenario, String load, String faults, Duration took, Map<String, Long> statusMix,
                                   Checker.Result result) throws IOException {
        if (!Files.exists(FILE)) {
            Files.writeString(FILE, "# Reliability report\n\nRun " + Instant.now() + " on " + hostDescription()
                    + " (scale: " + Scale.current().name().toLowerCase() + ")\n\n");
        }
        String section = "## " + scenario + "\n\n"
                + "- load: " + load + ", " + took.toMillis() + " ms\n"
                + "- faults: " + faults + "\n"
                + "- answers: " + statusMix + "\n"
                + "- checker: keys " + result.keys() + ", executed " + result.executed() + ", duplicate payments "
                + result.duplicatePayments() + ", duplicate charges " + result.duplicateCharges()
                + ", lost acknowledgements " + result.lostAcknowledgements() + ", payments without record "
                + result.orphanPayments() + ", drifting replays " + result.driftingReplays() + ", stuck records "
                + result.stuckRecords() + ", undocumented 5xx " + result.serverErrors() + ", answers whose state the"
                + " database contradicts " + result.contradictedStates() + "\n"
                + "- verdict: " + (result.violations().isEmpty() ? "held" : "VIOLATED " + result.violations()) + "\n\n";
        Files.writeString(FILE, section, StandardOpenOption.APPEND);
        System.out.print(section);
    }

    /** Adds a line to the section of {@code scenario} written last (a figure the checker's counts do not hold). */
    static synchronized void note(String scenario, String line) throws IOException {
        String section = "- note (" + scenario.substring(0, scenario.indexOf('.') + 1) + "): " + line + "\n\n";
        Files.writeString(FILE, section, StandardOpenOption.APPEND);
        System.out.print(section);
    }

    private static String hostDescription() {
        return Runtime.getRuntime().availableProcessors() + " cores, Java " + System.getProperty("java.version");
    }

    private Report() {
    }
}
