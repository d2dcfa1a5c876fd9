package dev.idempotency.reliability;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The lines log files get ({@code tail -F}, which also follows a file that appears later), for a test that waits for
 * a server to say it has reached a point: a line arrives as an event, no polling.
 */
final class LogWatch implements AutoCloseable {
    private final List<Path> files;
    private final Process tail;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> seen = new ArrayList<>();

    private LogWatch(List<Path> files, String from) throws IOException {
        this.files = files;
        List<String> command = new ArrayList<>(List.of("tail", "-n", from, "-F"));
        files.forEach(f -> command.add(f.toString()));
        tail = new ProcessBuilder(command).redirectErrorStream(true).start();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(tail.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    lines.add(line);
                }
            } catch (IOException ended) {
                // tail is gone
            }
        }, "log-watch-" + files.get(0).getFileName());
        reader.setDaemon(true);
        reader.start();
    }

    /** What the files get from now on (started before the action whose line it waits for). */
    static LogWatch fromNow(Path... files) throws IOException {
        return new LogWatch(List.of(files), "0");
    }

    /** The files from their first line on: for a line that may already have been written. */
    static LogWatch fromStart(Path... files) throws IOException {
        return new LogWatch(List.of(files), "+1");
    }

    /** Returns once {@code times} lines with {@code text} have arrived, at most {@code seconds} from now. */
    void await(String text, int times, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        int found = 0;
        while (found < times) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new IllegalStateException(files + " logged '" + text + "' " + found + " times, not " + times);
            }
            await(text, TimeUnit.NANOSECONDS.toSeconds(left) + 1);
            found++;
        }
    }

    void await(String text, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        for (long left = deadline - System.nanoTime(); left > 0; left = deadline - System.nanoTime()) {
            String line = lines.poll(left, TimeUnit.NANOSECONDS);
            if (line != null) {
                seen.add(line);
                if (line.contains(text)) {
                    return;
                }
            }
        }
        List<String> last = seen.subList(Math.max(0, seen.size() - 40), seen.size());
        throw new IllegalStateException(files + " never logged '" + text + "'; the last lines:\n" + String.join("\n", last));
    }

    @Override
    public void close() {
        tail.destroy();
    }
}
