package dev.idempotency.endpoint;

import dev.idempotency.testing.Narayana;
import jakarta.enterprise.context.control.RequestContextController;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSProducer;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import jakarta.transaction.Status;
import jakarta.transaction.TransactionManager;
import org.apache.activemq.artemis.api.core.QueueConfiguration;
import org.apache.activemq.artemis.api.core.RoutingType;
import org.apache.activemq.artemis.api.core.SimpleString;
import org.apache.activemq.artemis.core.config.Configuration;
import org.apache.activemq.artemis.core.config.impl.ConfigurationImpl;
import org.apache.activemq.artemis.core.server.embedded.EmbeddedActiveMQ;
import org.apache.activemq.artemis.core.settings.impl.AddressSettings;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;

import java.util.Map;
import java.util.function.Supplier;

/**
 * A real broker (ActiveMQ Artemis, the one WildFly embeds) in the test's JVM, and a consumer that delivers its
 * messages to a listener the way a container delivers them to a message-driven bean: each in a JTA transaction
 * (Narayana) with a request context, the database's work committed first and the message then acknowledged, or
 * both rolled back, so that the broker redelivers it with {@code JMSXDeliveryCount} counted up, and moves it to
 * its dead-letter queue after {@code maxDeliveryAttempts}. (A server commits both in one XA transaction; the
 * order here is that of a non-XA datasource as the last resource, whose window between the two the library
 * covers: a redelivery finds the record.)
 */
final class Broker implements AutoCloseable {
    static final String DLQ = "DLQ";
    private final EmbeddedActiveMQ server;
    private final ActiveMQConnectionFactory factory;

    Broker(int maxDeliveryAttempts) throws Exception {
        Configuration config = new ConfigurationImpl()
                .setPersistenceEnabled(false)
                .setSecurityEnabled(false)
                .addAcceptorConfiguration("in-vm", "vm://0");
        config.addAddressSetting("#", new AddressSettings()
                .setMaxDeliveryAttempts(maxDeliveryAttempts)
                .setRedeliveryDelay(0)
                .setDeadLetterAddress(SimpleString.of(DLQ)));
        config.addQueueConfiguration(QueueConfiguration.of(DLQ).setRoutingType(RoutingType.ANYCAST));
        server = new EmbeddedActiveMQ().setConfiguration(config);
        server.start();
        factory = new ActiveMQConnectionFactory("vm://0");
    }

    /** A context whose every send is its own message at once. */
    JMSContext context() {
        return factory.createContext(JMSContext.AUTO_ACKNOWLEDGE);
    }

    /** Sends a text message with these properties. */
    void send(String queue, String text, Map<String, String> properties) {
        try (JMSContext context = context()) {
            JMSProducer producer = context.createProducer();
            properties.forEach(producer::setProperty);
            producer.send(context.createQueue(queue), text);
        }
    }

    /** How many messages wait in a queue. */
    long depth(String queue) throws Exception {
        org.apache.activemq.artemis.core.server.Queue found = server.getActiveMQServer()
                .locateQueue(SimpleString.of(queue));
        return found == null ? 0 : found.getMessageCount();
    }

    /** The next message of a queue, taken off it (null when there is none within a second). */
    Message take(String queue) {
        try (JMSContext context = context()) {
            return context.createConsumer(context.createQueue(queue)).receive(1000);
        }
    }

    /** What became of one delivery. */
    enum Delivery { ACKNOWLEDGED, ROLLED_BACK, NONE }

    /**
     * Consumes a queue as one consumer of a container until it has been empty for half a second.
     *
     * @param container the container's side: a request context and the transaction's end
     * @return how many deliveries were acknowledged and rolled back
     */
    int[] drain(String queue, MessageListener listener, Container container) throws Exception {
        int[] counts = new int[2];
        try (JMSContext context = factory.createContext(JMSContext.SESSION_TRANSACTED)) {
            JMSConsumer consumer = context.createConsumer(context.createQueue(queue));
            while (true) {
                Delivery delivery = deliverOne(context, consumer, listener, container);
                if (delivery == Delivery.NONE) {
                    return counts;
                }
                counts[delivery == Delivery.ACKNOWLEDGED ? 0 : 1]++;
            }
        }
    }

    private Delivery deliverOne(JMSContext context, JMSConsumer consumer, MessageListener listener, Container container)
            throws Exception {
        Message message = consumer.receive(500);
        if (message == null) {
            return Delivery.NONE;
        }
        TransactionManager tm = Narayana.transactionManager();
        tm.begin();
        RequestContextController request = container.requestContext().get();
        request.activate();
        try {
            listener.onMessage(message);
        } catch (RuntimeException thrown) {
            // A container rolls back on a system exception.
            tm.setRollbackOnly();
        } finally {
            request.deactivate();
        }
        container.afterListener().run();
        boolean committed;
        if (tm.getStatus() == Status.STATUS_MARKED_ROLLBACK) {
            tm.rollback();
            committed = false;
        } else {
            try {
                tm.commit();
                committed = true;
            } catch (jakarta.transaction.RollbackException rolledBack) {
                committed = false;
            }
        }
        if (committed) {
            context.commit();
            return Delivery.ACKNOWLEDGED;
        }
        context.rollback();
        return Delivery.ROLLED_BACK;
    }

    /**
     * What the container does around the listener.
     *
     * @param requestContext the request context of a delivery
     * @param afterListener  runs after the listener returned, before the transaction ends (a test marks it
     *                       rollback-only there, as a broker's branch that fails to prepare would make it)
     */
    record Container(Supplier<RequestContextController> requestContext, Runnable afterListener) {
    }

    @Override
    public void close() throws Exception {
        factory.close();
        server.stop();
    }
}
