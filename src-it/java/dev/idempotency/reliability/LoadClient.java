package dev.idempotency.reliability;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** Sends the operations of a fault test to the nodes, recording every answer in a {@link History}. */
final class LoadClient {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2))
            .executor(Executors.newCachedThreadPool()).build();
    // A thread per request in flight, whatever the machine's core count (the common pool may have one).
    private static final ExecutorService IN_FLIGHT = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "in-flight");
        t.setDaemon(true);
        return t;
    });
    private final History history;
    private final Duration timeout;
    // Per node (host:port): requests sent and not answered yet, and answers received; a test waits on them.
    private final java.util.Map<String, java.util.concurrent.atomic.AtomicInteger> inFlight =
            new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.Map<String, java.util.concurrent.atomic.AtomicInteger> answered =
            new java.util.concurrent.ConcurrentHashMap<>();

    LoadClient(History history, Duration timeout) {
        this.history = history;
        this.timeout = timeout;
    }

    /** One request, recorded. Returns the status, or 0 when nothing was received. */
    Answer send(URI node, Operations.Operation op, boolean sameBody, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(node.resolve(op.path())).timeout(timeout)
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", op.key())
                .header("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                        (op.user() + ":" + op.user()).getBytes(StandardCharsets.UTF_8)))
                .POST(HttpRequest.BodyPublishers.ofString(sameBody ? op.body() : op.otherBody()));
        for (int i = 0; i + 1 < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        String name = node.getAuthority();
        long sentAt = System.currentTimeMillis();
        counter(inFlight, node).incrementAndGet();
        try {
            HttpResponse<byte[]> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            counter(answered, node).incrementAndGet();
            boolean retryAfter = response.headers().firstValue("Retry-After").isPresent();
            history.ok(op.key(), name, sameBody, response.statusCode(), response.body(), retryAfter,
                    response.headers().firstValue("Idempotency-State").orElse(null), sentAt);
            return new Answer(response.statusCode(), response.headers().firstValue("Retry-After").orElse(null),
                    response.headers().firstValue("Content-Type").orElse(""),
                    new String(response.body(), StandardCharsets.UTF_8),
                    response.headers().firstValue("Idempotency-State").orElse(null));
        } catch (HttpTimeoutException e) {
            history.info(op.key(), name, sameBody, sentAt);
        } catch (IOException e) {
            history.fail(op.key(), name, sameBody, e.toString(), sentAt);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            history.fail(op.key(), name, sameBody, "interrupted", sentAt);
        } finally {
            counter(inFlight, node).decrementAndGet();
        }
        return new Answer(0, null, "", "");
    }

    private static java.util.concurrent.atomic.AtomicInteger counter(
            java.util.Map<String, java.util.concurrent.atomic.AtomicInteger> counters, URI node) {
        return counters.computeIfAbsent(node.getAuthority(), n -> new java.util.concurrent.atomic.AtomicInteger());
    }

    /** How many answers this client has received from {@code node} so far. */
    int answered(URI node) {
        return counter(answered, node).get();
    }

    /** Returns once no request of this client to {@code node} is waiting for its answer (at most 2 minutes). */
    void awaitNoneInFlight(URI node) {
        awaitCounter("no request in flight to " + node, () -> counter(inFlight, node).get() == 0);
    }

    /** Returns once {@code node} has answered this client {@code more} more times than {@code before}. */
    void awaitAnswered(URI node, int before, int more) {
        awaitCounter(more + " more answers from " + node, () -> answered(node) >= before + more);
    }

    private static void awaitCounter(String what, dev.idempotency.testing.Conditions.Condition reached) {
        dev.idempotency.testing.Conditions.await(what, Duration.ofMinutes(2), reached);
    }

    /**
     * What a request got: its status (0: nothing received), Retry-After, Content-Type, body (for messages) and
     * Idempotency-State (null when the answer has none).
     */
    record Answer(int status, String retryAfter, String contentType, String body, String state) {
        Answer(int status, String retryAfter, String contentType, String body) {
            this(status, retryAfter, contentType, body, null);
        }

        /** A documented 503: problem+json with Retry-After. */
        boolean isRetryLater() {
            return status == 503 && retryAfter != null && contentType.startsWith("application/problem+json");
        }

        long retryAfterMillis() {
            return retryAfter == null ? 300 : Math.min(5000, Long.parseLong(retryAfter.trim()) * 1000);
        }
    }

    /**
     * The storm: every operation sent {@code minSends..maxSends} times to random nodes by {@code clients}
     * threads with random pauses; a few sends carry a different body (a misuse of the key).
     *
     * @return the wall-clock duration
     */
    Duration storm(List<URI> nodes, List<Operations.Operation> ops, int clients, int minSends, int maxSends, long seed)
            throws InterruptedException {
        Random random = new Random(seed);
        List<Runnable> sends = new ArrayList<>();
        for (Operations.Operation op : ops) {
            int times = minSends + random.nextInt(maxSends - minSends + 1);
            for (int i = 0; i < times; i++) {
                URI node = nodes.get(random.nextInt(nodes.size()));
                boolean same = random.nextInt(100) >= 3;
                long pause = random.nextInt(40);
                sends.add(() -> {
                    pause(pause);
                    send(node, op, same);
                });
            }
        }
        Collections.shuffle(sends, random);
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        long start = System.nanoTime();
        List<Future<?>> all = new ArrayList<>();
        sends.forEach(s -> all.add(pool.submit(s)));
        for (Future<?> f : all) {
            try {
                f.get(10, TimeUnit.MINUTES);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                throw new IllegalStateException("a client failed", e);
            }
        }
        pool.shutdown();
        return Duration.ofNanos(System.nanoTime() - start);
    }

    /**
     * Steady load until {@code running} turns false: {@code clients} threads each send a random operation (its
     * own body) to a random node among those {@code up} now, then pause {@code pauseMillis}.
     */
    Thread steady(java.util.Set<URI> up, List<Operations.Operation> ops, int clients, long pauseMillis,
                  java.util.concurrent.atomic.AtomicBoolean running) {
        Thread driver = new Thread(() -> {
            ExecutorService pool = Executors.newFixedThreadPool(clients);
            for (int c = 0; c < clients; c++) {
                Random random = new Random(c);
                pool.submit(() -> {
                    while (running.get()) {
                        List<URI> nodes = new ArrayList<>(up);
                        if (!nodes.isEmpty() && !ops.isEmpty()) {
                            send(nodes.get(random.nextInt(nodes.size())), ops.get(random.nextInt(ops.size())), true);
                        }
                        pause(pauseMillis);
                    }
                });
            }
            pool.shutdown();
            try {
                pool.awaitTermination(10, TimeUnit.MINUTES);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "steady-load");
        driver.start();
        return driver;
    }

    /** Sends every operation once to {@code node}, held {@code delayMillis} inside its business transaction. */
    List<java.util.concurrent.CompletableFuture<Answer>> holdInTransaction(URI node, List<Operations.Operation> ops,
                                                                          long delayMillis) {
        return sendAll(node, ops, "X-Demo-Delay-Ms", Long.toString(delayMillis));
    }

    /** Sends every operation once to {@code node}, all at the same time; the answers come later. */
    List<java.util.concurrent.CompletableFuture<Answer>> sendAll(URI node, List<Operations.Operation> ops,
                                                                String... headers) {
        List<java.util.concurrent.CompletableFuture<Answer>> inFlight = new ArrayList<>();
        for (Operations.Operation op : ops) {
            inFlight.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> send(node, op, true, headers), IN_FLIGHT));
        }
        return inFlight;
    }

    /**
     * A client's last retries: the same request until it has a final answer (not 409/429/503/none, and not the
     * 202 of an asynchronous operation that is still running).
     */
    Answer settle(URI node, Operations.Operation op) {
        return settle(node, op, true);
    }

    /** {@link #settle(URI, Operations.Operation)} with the operation's body, or with its other one. */
    Answer settle(URI node, Operations.Operation op, boolean sameBody) {
        Answer answer = send(node, op, sameBody);
        for (int i = 0; i < 30 && (answer.status() == 0 || answer.status() == 202 || answer.status() == 409
                || answer.status() == 425 || answer.status() == 429 || answer.status() == 503); i++) {
            pause(answer.retryAfterMillis());
            answer = send(node, op, sameBody);
        }
        return answer;
    }

    /**
     * Sends every payment command twice (two messages to the node's queue), each execution to be held
     * {@code delayMillis} inside its transaction; returns once all were queued (202).
     */
    void queueTwice(URI node, List<Operations.Operation> commands, long delayMillis) throws Exception {
        for (int copy = 0; copy < 2; copy++) {
            for (java.util.concurrent.CompletableFuture<Answer> queued : holdInTransaction(node, commands, delayMillis)) {
                Answer answer = queued.get(30, TimeUnit.SECONDS);
                if (answer.status() != 202) {
                    throw new AssertionError("a command was not queued: " + answer);
                }
            }
        }
    }

    /**
     * Every command's outcome from the node ({@link #awaitCommand}), each of which must end {@code SUCCEEDED}; before
     * failing, what the node logged of its messages (its {@code IDEM-} lines) is printed for whoever reads the failure.
     */
    void awaitSucceeded(WildFlyNode node, List<Operations.Operation> ops, Duration within) throws IOException {
        for (Operations.Operation op : ops) {
            Answer outcome = awaitCommand(node.base(), op, within);
            if (outcome.status() != 200 || !outcome.body().contains("SUCCEEDED")) {
                node.log().lines().filter(l -> l.contains("IDEM-")).forEach(System.out::println);
                throw new AssertionError("command " + op.key() + " did not end SUCCEEDED: " + outcome.status() + " "
                        + outcome.body());
            }
        }
    }

    /**
     * The outcome of a payment command, as its sender asks for it: {@code GET /payment-commands/{commandId}} with
     * {@code Prefer: wait=30}, again while the command is not done (its messages wait for a redelivery), for at
     * most {@code within}. A done command's answer is recorded, as the acknowledgement of its outcome.
     */
    Answer awaitCommand(URI node, Operations.Operation op, Duration within) {
        return poll(node, op.path() + "/" + op.key(), op, within, false, answer -> answer.status() == 200
                && !answer.body().contains("\"PROCESSING\"") && !answer.body().contains("\"FAILED_RETRYABLE\""),
                answer -> { });
    }

    /**
     * A client of an accepted asynchronous payment that only polls its status resource ({@code GET
     * /payments/operations/{key}} with {@code Prefer: wait=30}) and never sends the payment again, for at most
     * {@code within}: every answer is recorded and handed to {@code seen}; the first that is not {@code 202} (nor a
     * connection failure or a 503 of a node going down) is returned.
     */
    Answer pollAccepted(URI node, Operations.Operation op, Duration within, java.util.function.Consumer<Answer> seen) {
        return poll(node, "api/payments/operations/" + op.key(), op, within, true,
                answer -> answer.status() != 202 && answer.status() != 503, seen);
    }

    // Asks a status resource with Prefer: wait=30 until an answer is done (or within has passed), 200 ms apart; records
    // every answer, or only the last.
    private Answer poll(URI node, String path, Operations.Operation op, Duration within, boolean recordEach,
                        java.util.function.Predicate<Answer> done, java.util.function.Consumer<Answer> seen) {
        long deadline = System.nanoTime() + within.toNanos();
        String name = node.getAuthority();
        while (true) {
            HttpRequest request = HttpRequest.newBuilder(node.resolve(path))
                    .timeout(Duration.ofSeconds(40)).header("Prefer", "wait=30")
                    .header("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                            (op.user() + ":" + op.user()).getBytes(StandardCharsets.UTF_8))).GET().build();
            long sentAt = System.currentTimeMillis();
            try {
                HttpResponse<byte[]> response = HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
                String state = response.headers().firstValue("Idempotency-State").orElse(null);
                Answer answer = new Answer(response.statusCode(), response.headers().firstValue("Retry-After")
                        .orElse(null), response.headers().firstValue("Content-Type").orElse(""),
                        new String(response.body(), StandardCharsets.UTF_8), state);
                boolean finished = done.test(answer) || System.nanoTime() > deadline;
                if (recordEach || finished) {
                    history.ok(op.key(), name, true, response.statusCode(), response.body(), answer.retryAfter() != null,
                            state, sentAt);
                }
                seen.accept(answer);
                if (finished) {
                    return answer;
                }
            } catch (IOException e) {
                history.fail(op.key(), name, true, e.toString(), sentAt);
                if (System.nanoTime() > deadline) {
                    return new Answer(0, null, "", "");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Answer(0, null, "", "");
            }
            // Not done yet (still running past the server's wait, or given back for a redelivery): ask again soon.
            pause(200);
        }
    }

    /**
     * A pause that is part of the scenario or of a client's behaviour (think time, the Retry-After it was told, an
     * outage's or a failover's length), never a wait for the system under test: a test waits for the system on a
     * condition ({@link Checker#await}, {@link LogWatch}, {@code dev.idempotency.testing.Conditions}).
     */
    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
