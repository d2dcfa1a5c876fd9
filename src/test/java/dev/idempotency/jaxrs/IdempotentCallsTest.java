package dev.idempotency.jaxrs;

import com.sun.net.httpserver.HttpServer;
import jakarta.ws.rs.ProcessingException;
import jakarta.ws.rs.client.Client;
import jakarta.ws.rs.client.ClientBuilder;
import jakarta.ws.rs.client.Entity;
import jakarta.ws.rs.core.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The client half against a real HTTP server (the JDK's) that answers as scripted: as this library does, with
 * {@code Idempotency-State}, and as a server that only follows the IETF draft does, without it.
 */
class IdempotentCallsTest {
    private HttpServer server;
    private final Deque<Answer> script = new ArrayDeque<>();
    private final List<Sent> sent = new CopyOnWriteArrayList<>();
    private final List<Duration> waits = new ArrayList<>();
    // The budget's time: it moves only when the filter waits, by what it waits.
    private final IdempotentCalls.Timeline timeline = new IdempotentCalls.Timeline() {
        private long now;

        @Override
        public long nanos() {
            return now;
        }

        @Override
        public void waitFor(Duration delay) {
            waits.add(delay);
            now += delay.toNanos();
        }
    };
    private Client client;
    private IdempotentCalls calls;
    private String uri;

    record Answer(int status, Map<String, String> headers, String body) {
    }

    record Sent(String key, String body) {
    }

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/payments", exchange -> {
            sent.add(new Sent(exchange.getRequestHeaders().getFirst("Idempotency-Key"),
                    new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)));
            Answer answer = script.size() > 1 ? script.poll() : script.peek();
            answer.headers().forEach((name, value) -> exchange.getResponseHeaders().add(name, value));
            byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(answer.status(), body.length == 0 ? -1 : body.length);
            if (body.length > 0) {
                exchange.getResponseBody().write(body);
            }
            exchange.close();
        });
        server.start();
        uri = "http://127.0.0.1:" + server.getAddress().getPort() + "/payments";
        client = ClientBuilder.newClient();
        calls = new IdempotentCalls(4, Duration.ofSeconds(30), timeline);
    }

    @AfterEach
    void stop() {
        client.close();
        server.stop(0);
    }

    private void answers(Answer... answers) {
        script.addAll(List.of(answers));
    }

    private static Answer state(int status, String state, String retryAfter) {
        return new Answer(status, retryAfter == null ? Map.of("Idempotency-State", state)
                : Map.of("Idempotency-State", state, "Retry-After", retryAfter), "");
    }

    private static Answer created() {
        return new Answer(201, Map.of("Idempotency-State", "applied;next=stop", "Content-Type", "application/json"),
                "{\"id\":\"p-1\"}");
    }

    // One operation through a JAX-RS client whose attempts answer with a Response.
    private Response post() {
        return calls.run(key -> client.target(uri).request().header("Idempotency-Key", key)
                .post(Entity.json("{\"amount\":5}")));
    }

    @Test
    void anOperationInProgressIsAskedAgainWithTheSameKeyUntilItsOutcomeComes() {
        answers(state(409, "in-progress;next=same-key", "2"), state(202, "in-progress;next=same-key", "3"), created());
        Response answer = post();
        assertThat(answer.getStatus()).isEqualTo(201);
        assertThat(answer.readEntity(String.class)).isEqualTo("{\"id\":\"p-1\"}");
        assertThat(sent).hasSize(3);
        assertThat(sent).extracting(Sent::key).as("one key, generated once for the call").doesNotContainNull()
                .containsOnly(sent.get(0).key());
        assertThat(sent).extracting(Sent::body).containsOnly("{\"amount\":5}");
        assertThat(waits).containsExactly(Duration.ofSeconds(2), Duration.ofSeconds(3));
    }

    @Test
    void theCallersOwnKeyIsKeptForEveryAttempt() {
        answers(state(503, "not-applied;next=same-key", "1"), created());
        Response answer = calls.run("order-42", key -> client.target(uri).request().header("Idempotency-Key", key)
                .post(Entity.json("{\"amount\":5}")));
        assertThat(answer.getStatus()).isEqualTo(201);
        assertThat(sent).extracting(Sent::key).containsExactly("order-42", "order-42");
    }

    @Test
    void aFinalAnswerOrAFailureNoRetryGetsPastIsTheAnswerAtOnce() {
        for (Answer finalAnswer : List.of(state(400, "not-applied;next=stop", null),
                state(422, "not-applied;next=new-key", null), state(402, "applied;next=stop", null),
                state(500, "not-applied;next=stop", null))) {
            script.clear();
            sent.clear();
            answers(finalAnswer);
            assertThat(post().getStatus()).isEqualTo(finalAnswer.status());
            assertThat(sent).as(finalAnswer.toString()).hasSize(1);
        }
        assertThat(waits).isEmpty();
    }

    @Test
    void aNotAppliedFailureIsRetriedWithTheSameKeyEvenWhereANewKeyWouldBeSafe() {
        answers(state(503, "not-applied;next=new-key", null), created());
        assertThat(post().getStatus()).isEqualTo(201);
        assertThat(sent).extracting(Sent::key).containsOnly(sent.get(0).key()).hasSize(2);
        assertThat(waits).as("no Retry-After: one second").containsExactly(Duration.ofSeconds(1));
    }

    @Test
    void anOutcomeNobodyCanTellWithinTheBudgetIsATypedExceptionNeverAGuess() {
        answers(state(503, "unknown;next=same-key", "1"));
        Throwable thrown = catchThrowable(this::post);
        assertThat(thrown).isInstanceOf(ProcessingException.class);
        OperationOutcomeUnknownException unknown = OperationOutcomeUnknownException.in(thrown).orElseThrow();
        assertThat(unknown.attempts()).isEqualTo(4);
        assertThat(unknown.lastStatus()).isEqualTo(503);
        assertThat(unknown.lastState()).map(s -> s.state().token()).contains("unknown");
        assertThat(sent).hasSize(4).extracting(Sent::key).containsOnly(sent.get(0).key());
    }

    @Test
    void aRetryAfterBeyondTheBudgetEndsTheRetriesThere() {
        calls = new IdempotentCalls(10, Duration.ofSeconds(5), timeline);
        answers(state(409, "in-progress;next=same-key", "3"), state(409, "in-progress;next=same-key", "3"));
        assertThat(OperationOutcomeUnknownException.in(catchThrowable(this::post))).isPresent();
        assertThat(sent).as("3 s fits the 5 s budget once, not twice").hasSize(2);

        script.clear();
        sent.clear();
        answers(state(429, "not-applied;next=same-key", "60"));
        assertThat(post().getStatus()).as("nothing was applied: the last answer, as it is").isEqualTo(429);
        assertThat(sent).hasSize(1);
    }

    @Test
    void aServerThatOnlyFollowsTheDraftIsRetriedWhereTheDraftMakesThatSafe() {
        answers(new Answer(409, Map.of("Retry-After", "1"), ""), new Answer(425, Map.of(), ""),
                new Answer(503, Map.of(), ""), new Answer(201, Map.of(), ""));
        assertThat(post().getStatus()).isEqualTo(201);
        assertThat(sent).hasSize(4).extracting(Sent::key).containsOnly(sent.get(0).key());

        script.clear();
        sent.clear();
        answers(new Answer(409, Map.of("Content-Type", "application/problem+json"), "{\"title\":\"order already paid\"}"));
        assertThat(post().getStatus()).as("a conflict without Retry-After is the application's").isEqualTo(409);
        assertThat(sent).hasSize(1);

        script.clear();
        sent.clear();
        answers(new Answer(504, Map.of(), ""));
        assertThat(OperationOutcomeUnknownException.in(catchThrowable(this::post))).as("a gateway timeout may hide a"
                + " commit").isPresent();
    }

    // What a Rest Client method with an entity type does: the entity for a 2xx, WebApplicationException otherwise.
    @Test
    void anAttemptThatAnswersWithAnEntityOrThrowsItsAnswerIsReadTheSameWay() {
        answers(state(409, "in-progress;next=same-key", "1"), created());
        String entity = calls.run(key -> client.target(uri).request().header("Idempotency-Key", key)
                .post(Entity.json("{\"amount\":5}"), String.class));
        assertThat(entity).isEqualTo("{\"id\":\"p-1\"}");
        assertThat(sent).hasSize(2).extracting(Sent::key).containsOnly(sent.get(0).key());

        script.clear();
        sent.clear();
        answers(state(402, "applied;next=stop", null));
        Throwable declined = catchThrowable(() -> calls.run(key -> client.target(uri).request()
                .header("Idempotency-Key", key).post(Entity.json("{}"), String.class)));
        assertThat(declined).as("the answer, rethrown as the client threw it")
                .isInstanceOf(jakarta.ws.rs.WebApplicationException.class);
        assertThat(((jakarta.ws.rs.WebApplicationException) declined).getResponse().getStatus()).isEqualTo(402);
        assertThat(sent).hasSize(1);
    }

    @Test
    void anAttemptThatGotNoAnswerIsAskedAgainWithTheSameKeyAndNeverGuessed() {
        List<String> keys = new ArrayList<>();
        int[] calls = {0};
        Throwable thrown = catchThrowable(() -> this.calls.run(key -> {
            keys.add(key);
            calls[0]++;
            throw new ProcessingException("connection reset");
        }));
        OperationOutcomeUnknownException unknown = OperationOutcomeUnknownException.in(thrown).orElseThrow();
        assertThat(unknown.lastStatus()).isZero();
        assertThat(unknown.getCause()).hasMessage("connection reset");
        assertThat(calls[0]).isEqualTo(4);
        assertThat(keys).containsOnly(keys.get(0));

        answers(created());
        int[] attempts = {0};
        Response answer = this.calls.run(key -> {
            if (attempts[0]++ == 0) {
                throw new ProcessingException("read timed out");
            }
            return client.target(uri).request().header("Idempotency-Key", key).post(Entity.json("{}"));
        });
        assertThat(answer.getStatus()).as("the answer lost, then asked for again").isEqualTo(201);
    }

    @Test
    void theVerdictOfEachAnswer() {
        assertThat(IdempotentCalls.verdict(201, dev.idempotency.IdempotencyState.parse("applied;next=stop"), false))
                .isEqualTo(IdempotentCalls.Verdict.ANSWER);
        assertThat(IdempotentCalls.verdict(409, dev.idempotency.IdempotencyState.parse("in-progress;next=same-key"),
                true)).isEqualTo(IdempotentCalls.Verdict.RETRY_UNKNOWN);
        assertThat(IdempotentCalls.verdict(503, java.util.Optional.empty(), false))
                .isEqualTo(IdempotentCalls.Verdict.RETRY_UNKNOWN);
        assertThat(IdempotentCalls.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT")).isEmpty();
        assertThat(IdempotentCalls.retryAfter(" 7 ")).contains(Duration.ofSeconds(7));
    }
}
