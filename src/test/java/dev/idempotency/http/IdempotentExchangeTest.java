package dev.idempotency.http;

import dev.idempotency.core.OutcomeClassification;
import dev.idempotency.core.Claim;
import dev.idempotency.core.Operation;
import dev.idempotency.core.TransactionEnd;
import dev.idempotency.spi.StoredResponse;
import dev.idempotency.testing.StoreFixture;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The request's stages, one immutable value at a time, and what the application's context sees of them. */
class IdempotentExchangeTest {
    private static final CapturedRequest REQUEST = new CapturedRequest("POST", "/p", "", URI.create("http://h/"),
            "application/json", Map.of("Idempotency-Key", List.of("k-1")), "{}".getBytes(), null, null);
    private static final StoredResponse CREATED = new StoredResponse(201, Map.of(), new byte[]{'{', '}'},
            StoredResponse.PLAIN);

    private final Operation operation = StoreFixture.operation("k-1");
    private final Claim claim = new Claim(operation, "0123456789abcdef0123456789abcdef", 2);

    @Test
    void aPreparedRequestIsNotYetActiveAndKeepsTheFiltersRead() {
        IdempotentExchange exchange = new IdempotentExchange();
        assertThat(exchange.stage()).isInstanceOf(ExchangeStage.Idle.class);

        exchange.capture(REQUEST, operation);
        exchange.read(Optional.empty());

        ExchangeStage.Read read = (ExchangeStage.Read) exchange.stage();
        assertThat(read.record()).isEmpty();
        assertThat(read.operation()).isSameAs(operation);
        // The application's context stays inactive until the interceptor takes the operation on.
        assertThat(exchange.isActive()).isFalse();
        assertThat(exchange.key()).isEmpty();
        assertThatThrownBy(() -> exchange.derive("acquirer")).hasMessageContaining("IDEM-X001");
    }

    @Test
    void aRequestWithoutAKeyIsUnkeyedAndCannotBeRead() {
        IdempotentExchange exchange = new IdempotentExchange();
        exchange.capture(REQUEST, null);

        assertThat(exchange.stage()).isInstanceOf(ExchangeStage.Unkeyed.class);
        assertThatThrownBy(() -> exchange.read(Optional.empty())).hasMessageContaining("IDEM-X004");
    }

    @Test
    void aRunningClaimIsWhatTheApplicationSeesAndWhatTheEndOfTheRequestMustSettle() {
        IdempotentExchange exchange = new IdempotentExchange();
        exchange.capture(REQUEST, operation);
        exchange.admitting(operation);
        assertThat(exchange.isActive()).isTrue();
        assertThat(exchange.stage().unsettledClaim()).isEmpty();

        exchange.running(claim);

        assertThat(exchange.key()).contains("k-1");
        assertThat(exchange.attempt()).isEqualTo(2);
        assertThat(exchange.derive("acquirer")).isEqualTo(operation.derive("acquirer"));
        assertThat(exchange.stage().unsettledClaim()).contains(claim);

        exchange.failed(OutcomeClassification.FailureKind.FINAL);
        ExchangeStage.Failed failed = (ExchangeStage.Failed) exchange.stage();
        assertThat(failed.kind()).isEqualTo(OutcomeClassification.FailureKind.FINAL);
        assertThat(failed.unsettledClaim()).contains(claim);

        exchange.settled(Optional.empty());
        assertThat(exchange.stage().unsettledClaim()).isEmpty();
        assertThat(exchange.attempt()).isEqualTo(2);
        assertThat(exchange.isActive()).isTrue();
    }

    @Test
    void aFailureWithoutAClaimIsAnError() {
        IdempotentExchange exchange = new IdempotentExchange();
        exchange.capture(REQUEST, operation);
        exchange.admitting(operation);

        assertThatThrownBy(() -> exchange.failed(OutcomeClassification.FailureKind.RETRYABLE)).hasMessageContaining("IDEM-X004");
    }

    @Test
    void theEndOfAJoinedTransactionChangesOnlyAnAwaitingStage() {
        IdempotentExchange exchange = new IdempotentExchange();
        exchange.capture(REQUEST, operation);
        exchange.admitting(operation);
        exchange.running(claim);
        // Reported before the exchange awaits (it never is: awaitCommit comes first): nothing to change.
        exchange.transactionEnded(TransactionEnd.ROLLED_BACK);
        assertThat(exchange.stage()).isInstanceOf(ExchangeStage.Running.class);

        exchange.awaitCommit(claim, CREATED);
        assertThat(((ExchangeStage.AwaitingCommit) exchange.stage()).end()).isEqualTo(TransactionEnd.OPEN);
        exchange.transactionEnded(TransactionEnd.COMMITTED);

        ExchangeStage.AwaitingCommit awaiting = (ExchangeStage.AwaitingCommit) exchange.stage();
        assertThat(awaiting.end()).isEqualTo(TransactionEnd.COMMITTED);
        assertThat(awaiting.first()).isSameAs(CREATED);

        exchange.settled(CREATED, false, dev.idempotency.core.AnswerStates.APPLIED);
        exchange.transactionEnded(TransactionEnd.UNKNOWN);
        ExchangeStage.Settled settled = (ExchangeStage.Settled) exchange.stage();
        assertThat(settled.reply()).map(ExchangeStage.Reply::response).containsSame(CREATED);
    }

    @Test
    void anEndReportedFromAnotherThreadIsNotLost() throws Exception {
        IdempotentExchange exchange = new IdempotentExchange();
        exchange.capture(REQUEST, operation);
        exchange.admitting(operation);
        exchange.running(claim);
        exchange.awaitCommit(claim, CREATED);
        CountDownLatch reported = new CountDownLatch(1);
        ExecutorService reaper = Executors.newSingleThreadExecutor();
        try {
            reaper.submit(() -> {
                exchange.transactionEnded(TransactionEnd.ROLLED_BACK);
                reported.countDown();
            });
            assertThat(reported.await(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            reaper.shutdownNow();
        }
        assertThat(((ExchangeStage.AwaitingCommit) exchange.stage()).end()).isEqualTo(TransactionEnd.ROLLED_BACK);
    }
}
