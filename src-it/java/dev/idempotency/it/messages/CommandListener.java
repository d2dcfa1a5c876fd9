package dev.idempotency.it.messages;

import dev.idempotency.Idempotent;
import dev.idempotency.KeySource;
import jakarta.annotation.Resource;
import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import jakarta.jms.TextMessage;
import jakarta.json.Json;
import jakarta.json.JsonObject;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * A message-driven bean as an application writes one: commands from the tests' queue (src-it/messaging-it.cli),
 * keyed by the producer's
 * {@code IdempotencyKey} property, each writing one row of {@code it_command_effect} on the record table's
 * datasource, in the transaction the container delivers the message in. What a command does is in its body:
 * {@code ok}, {@code reject} (a final failure), {@code fail-until-N} (retryable until delivery N) or
 * {@code fail-always}.
 */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationLookup", propertyValue = "java:/jms/queue/it-commands"),
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "16")})
public class CommandListener implements MessageListener {
    @Resource(lookup = "java:/jdbc/PaymentsDS")
    DataSource database;

    /** A command that can never succeed: the same command fails the same way. */
    public static class CommandRejected extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public CommandRejected(String reason) {
            super(reason);
        }
    }

    @Override
    @Idempotent(endpoint = "it.commands", keySource = KeySource.MESSAGE_PROPERTY, finalOn = CommandRejected.class)
    public void onMessage(Message message) {
        try {
            JsonObject command;
            try (var reader = Json.createReader(new java.io.StringReader(((TextMessage) message).getText()))) {
                command = reader.readObject();
            }
            String behaviour = command.getString("behaviour", "ok");
            int delivery = message.getIntProperty("JMSXDeliveryCount");
            if (behaviour.equals("reject")) {
                throw new CommandRejected("rejected");
            }
            if (behaviour.equals("fail-always") || (behaviour.startsWith("fail-until-")
                    && delivery < Integer.parseInt(behaviour.substring("fail-until-".length())))) {
                throw new IllegalStateException("the acquirer timed out (delivery " + delivery + ")");
            }
            try (Connection c = database.getConnection();
                 PreparedStatement insert = c.prepareStatement(
                         "INSERT INTO it_command_effect (reference, delivery) VALUES (?, ?)")) {
                insert.setString(1, command.getString("reference"));
                insert.setInt(2, delivery);
                insert.executeUpdate();
            }
        } catch (JMSException | SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
