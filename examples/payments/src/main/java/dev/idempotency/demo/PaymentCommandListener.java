package dev.idempotency.demo;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyContext;
import dev.idempotency.KeySource;
import jakarta.inject.Inject;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;

/**
 * Payment commands from the queue {@code java:/jms/queue/payment-commands} (server-config/wildfly/messaging.cli),
 * as a batch import or an acquirer's webhook hands them over ({@link PaymentCommandResource}): a payment as JSON
 * with its {@code commandId}, the tenant and the requesting user in the message's properties. Each command makes
 * one payment however often it is delivered — sent twice, redelivered after a crash, consumed by two nodes — in
 * the transaction that acknowledges the message. A command the demo refuses (invalid, its order already paid by
 * another command) fails for good: stored and not retried; an unavailable acquirer is retried by the broker.
 *
 * <p>A message-driven bean on WildFly, declared in {@code WEB-INF/jboss-ejb3.xml} (not with {@code @MessageDriven},
 * so that the WAR also deploys on Payara Micro, which has no broker).
 */
public class PaymentCommandListener implements MessageListener {
    private static final Jsonb JSON = JsonbBuilder.create();

    @Inject
    Checkout checkout;
    @Inject
    IdempotencyContext idempotency;

    /** A command refused for good: the same command is refused the same way. */
    public static class CommandRefused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        CommandRefused(String reason, Throwable cause) {
            super(reason, cause);
        }
    }

    @Override
    @Idempotent(endpoint = "payments.commands", keySource = KeySource.BODY_FIELD, keyName = "commandId",
            finalOn = CommandRefused.class)
    public void onMessage(Message message) {
        PaymentRequest payment;
        try {
            payment = JSON.fromJson(message.getBody(String.class), PaymentRequest.class);
        } catch (JMSException | jakarta.json.bind.JsonbException unreadable) {
            throw new CommandRefused("the command is not a payment", unreadable);
        }
        try {
            checkout.pay(payment, idempotency.tenant().orElseThrow());
        } catch (DemoProblem problem) {
            if (problem.clientError()) {
                throw new CommandRefused(problem.getMessage(), problem);
            }
            throw problem;
        }
    }
}
