package dev.idempotency.core;

import dev.idempotency.IdempotencyException;
import dev.idempotency.KeySource;
import dev.idempotency.ProblemType;
import dev.idempotency.json.JacksonCanonicalJson;
import dev.idempotency.testing.PolicyBuilder;
import dev.idempotency.testing.StoreFixture;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Key, scope and fingerprint of a message, as the protocol takes them from what the messaging adapter read. */
class MessagePreparationTest {
    private static final MessagePolicy BY_MERCHANT = new MessagePolicy(ScopeSource.constant("acme"),
            new ScopeSource(true, "merchantId"), List.of("commandType"), 10);
    private static final MessagePolicy CONSTANT = new MessagePolicy(ScopeSource.constant(""),
            ScopeSource.constant("$messages"), List.of(), 10);

    private final EndpointPolicy byProperty = PolicyBuilder.defaults().with(p -> p.endpoint = "payments.commands")
            .consumingMessages(BY_MERCHANT, KeySource.MESSAGE_PROPERTY, "IdempotencyKey").build();
    private final EndpointPolicy byBodyField = PolicyBuilder.defaults().with(p -> p.endpoint = "payments.imported")
            .consumingMessages(CONSTANT, KeySource.BODY_FIELD, "reference").build();
    private final EndpointPolicy byMessageId = PolicyBuilder.defaults().with(p -> p.endpoint = "payments.legacy")
            .consumingMessages(CONSTANT, KeySource.MESSAGE_ID, MessageFacts.MESSAGE_ID).build();
    private final RequestPreparation preparation = new RequestPreparation(KeyRules.defaults(), new JacksonCanonicalJson(),
            new Fingerprinter("0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8), List.of(),
                    new JacksonCanonicalJson()), StoreFixture.SCOPE_DIGEST, new MessageScopeResolver(Map.of(
                    "payments.commands", BY_MERCHANT, "payments.imported", CONSTANT, "payments.legacy", CONSTANT)),
            java.time.Clock.systemUTC());

    @Test
    void aResentCopyWithANewMessageIdIsTheSameOperationAndMatchesItsFingerprint() {
        Operation first = prepare(byProperty, message("ID:1", 1, Map.of("IdempotencyKey", "pay-7", "merchantId", "m-1",
                "commandType", "capture"), "{\"amount\":100,\"currency\":\"EUR\"}"));
        Operation resent = prepare(byProperty, message("ID:2", 1, Map.of("IdempotencyKey", "pay-7", "merchantId", "m-1",
                "commandType", "capture", "traceparent", "00-abc"), "{ \"currency\":\"EUR\", \"amount\":1E2 }"));
        assertThat(resent.scopeKey()).isEqualTo(first.scopeKey());
        assertThat(resent.scope()).isEqualTo(first.scope());
        assertThat(resent.scope().tenant()).isEqualTo("acme");
        assertThat(resent.scope().principal()).isEqualTo("m-1");
        assertThat(resent.fingerprint().matches(first.fingerprint().value()))
                .as("a property the endpoint does not name, a new message id, a respelled body").isTrue();
    }

    @Test
    void aNamedPropertyOrAnotherPayloadMakesTheKeyAMisuse() {
        Map<String, String> capture = Map.of("IdempotencyKey", "pay-7", "merchantId", "m-1", "commandType", "capture");
        Operation first = prepare(byProperty, message("ID:1", 1, capture, "{\"amount\":100}"));
        Map<String, String> refund = new HashMap<>(capture);
        refund.put("commandType", "refund");
        assertThat(prepare(byProperty, message("ID:2", 1, refund, "{\"amount\":100}")).fingerprint()
                .matches(first.fingerprint().value())).isFalse();
        assertThat(prepare(byProperty, message("ID:3", 1, capture, "{\"amount\":101}")).fingerprint()
                .matches(first.fingerprint().value())).isFalse();
    }

    @Test
    void theSameKeyOfAnotherPrincipalIsAnotherOperation() {
        Operation m1 = prepare(byProperty, message("ID:1", 1, Map.of("IdempotencyKey", "k", "merchantId", "m-1"), "{}"));
        Operation m2 = prepare(byProperty, message("ID:1", 1, Map.of("IdempotencyKey", "k", "merchantId", "m-2"), "{}"));
        assertThat(m1.scopeKey()).isNotEqualTo(m2.scopeKey());
    }

    @Test
    void aMessageWithoutItsKeyOrItsPrincipalIsRefused() {
        assertThatThrownBy(() -> prepare(byProperty, message("ID:1", 1, Map.of("merchantId", "m-1"), "{}")))
                .isInstanceOfSatisfying(IdempotencyException.class, e -> {
                    assertThat(e.problem().type()).isEqualTo(ProblemType.KEY_MISSING);
                    assertThat(e.problem().detail()).contains("message property IdempotencyKey");
                });
        assertThatThrownBy(() -> prepare(byProperty, message("ID:1", 1, Map.of("IdempotencyKey", "k"), "{}")))
                .isInstanceOfSatisfying(IdempotencyException.class,
                        e -> assertThat(e.problem().type()).isEqualTo(ProblemType.PRINCIPAL_REQUIRED));
        assertThatThrownBy(() -> prepare(byProperty, message("ID:1", 1, Map.of("IdempotencyKey", "bad key", "merchantId",
                "m-1"), "{}"))).isInstanceOfSatisfying(IdempotencyException.class,
                e -> assertThat(e.problem().type()).isEqualTo(ProblemType.KEY_INVALID));
    }

    @Test
    void aBodyFieldKeyIsReadFromTheMessagesJson() {
        Operation op = prepare(byBodyField, message("ID:1", 1, Map.of(), "{\"reference\":\"IMP-42\",\"amount\":5}"));
        assertThat(op.scope().key()).isEqualTo("IMP-42");
        assertThat(op.scope().principal()).isEqualTo("$messages");
        assertThatThrownBy(() -> prepare(byBodyField, message("ID:1", 1, Map.of(), "{\"reference\":")))
                .isInstanceOfSatisfying(IdempotencyException.class,
                        e -> assertThat(e.problem().type()).isEqualTo(ProblemType.BODY_MALFORMED));
    }

    @Test
    void theMessageIdIsTheKeyOnlyWhereChosenAndThenARedeliveryIsTheSameOperationButAResendIsNot() {
        Operation delivered = prepare(byMessageId, message("ID:1", 1, Map.of(), "{}"));
        Operation redelivered = prepare(byMessageId, message("ID:1", 2, Map.of(), "{}"));
        Operation resent = prepare(byMessageId, message("ID:2", 1, Map.of(), "{}"));
        assertThat(redelivered.scopeKey()).isEqualTo(delivered.scopeKey());
        assertThat(resent.scopeKey()).isNotEqualTo(delivered.scopeKey());
    }

    @Test
    void aTextThatIsNotJsonIsFingerprintedAsItsBytes() {
        assertThat(MessageFacts.textType("  {\"a\":1}")).isEqualTo("application/json");
        assertThat(MessageFacts.textType("CAPTURE pay-7")).isEqualTo("text/plain");
        Operation plain = prepare(byProperty, new MessageFacts("payments.commands", Map.of("IdempotencyKey", "k",
                "merchantId", "m"), "text/plain", "CAPTURE 100".getBytes(StandardCharsets.UTF_8), List.of(), 1));
        Operation other = prepare(byProperty, new MessageFacts("payments.commands", Map.of("IdempotencyKey", "k",
                "merchantId", "m"), "text/plain", "CAPTURE 100 ".getBytes(StandardCharsets.UTF_8), List.of(), 1));
        assertThat(other.fingerprint().matches(plain.fingerprint().value())).isFalse();
    }

    private Operation prepare(EndpointPolicy policy, MessageFacts message) {
        return preparation.prepare(message, policy, Optional.empty()).orElseThrow();
    }

    private static MessageFacts message(String id, int delivery, Map<String, String> properties, String json) {
        Map<String, String> all = new HashMap<>(properties);
        all.put(MessageFacts.MESSAGE_ID, id);
        MessagePolicy policy = properties.containsKey("merchantId") ? BY_MERCHANT : CONSTANT;
        return new MessageFacts("payments.commands", all, MessageFacts.textType(json),
                json.getBytes(StandardCharsets.UTF_8), policy.fingerprintProperties(), delivery);
    }
}
