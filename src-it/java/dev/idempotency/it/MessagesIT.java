package dev.idempotency.it;

import dev.idempotency.it.messages.CommandListener;
import dev.idempotency.it.messages.Commands;
import dev.idempotency.it.messages.HandledLog;
import dev.idempotency.it.messages.MessagesApplication;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.EmptyAsset;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.File;
import java.net.URISyntaxException;
import java.net.URL;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An idempotent message-driven bean on WildFly's full profile: the embedded broker's queue of the tests' commands
 * (src-it/messaging-it.cli: redelivered after 300 ms, at most 5 times, then to the dead-letter queue),
 * the listener's work on the record table's datasource, and the broker's acknowledgement in one JTA transaction
 * (two-phase with PostgreSQL's XA datasource on the tests' own cluster; the H2 datasource as its last resource).
 * The same on Payara Server's embedded OpenMQ (src-it/messaging-it.asadmin: the broker's dead-message queue after
 * the 5th delivery, with no delay between them), with PostgreSQL.
 * Messages are sent from the server as a producer sends them; every wait is on the server's events.
 */
@ExtendWith(ArquillianExtension.class)
class MessagesIT {
    private static final String CONFIG = String.join("\n",
            "idempotency.endpoints.it.commands.message.max-deliveries=5", "");

    @Deployment(testable = false)
    static WebArchive messages() {
        WebArchive war = ShrinkWrap.create(WebArchive.class, "messages.war")
                .addClasses(MessagesApplication.class, CommandListener.class, CommandListener.CommandRejected.class,
                        Commands.class, HandledLog.class)
                .addAsLibrary(new File(System.getProperty("it.library")))
                .addAsResource(new StringAsset(CONFIG), "META-INF/microprofile-config.properties")
                .addAsWebInfResource(EmptyAsset.INSTANCE, "beans.xml");
        if ("payara-server".equals(System.getProperty("it.server"))) {
            // Payara names no resource java:/...: the descriptors point the annotations' lookups at its names
            // (src-it/messaging-it.asadmin), as an application deployed on both servers does.
            war.addAsWebInfResource(MessagesIT.class.getResource("/payara-server/messages-web.xml"), "web.xml")
                    .addAsWebInfResource(MessagesIT.class.getResource("/payara-server/messages-ejb-jar.xml"),
                            "ejb-jar.xml");
        }
        return war;
    }

    @ArquillianResource
    URL base;
    private Api api;

    @BeforeEach
    void client() throws URISyntaxException {
        // Payara Micro has no broker: message-driven beans run on WildFly and Payara Server. Included there by
        // mistake, the class fails rather than skips (a skipped test would pass a run that proved nothing).
        if ("payara".equals(System.getProperty("it.server"))) {
            throw new IllegalStateException("MessagesIT needs a broker: run it on WildFly or Payara Server");
        }
        api = new Api(base.toURI());
    }

    @Test
    void aCommandSentTwiceHasOneEffectAndItsCopyIsAcknowledgedWithoutRunning() {
        String key = key();
        send(key, 1, command(key, "ok"));
        send(key, 1, command(key, "ok"));

        awaitHandled(key, "EXECUTED", 1);
        awaitHandled(key, "DUPLICATE", 1);
        assertThat(effects(key)).isEqualTo(1);
        assertThat(record(key)).isEqualTo("SUCCEEDED 1 204");
    }

    @Test
    void sixtyFourCopiesOfOneCommandOnAPoolOfConsumersHaveOneEffect() {
        String key = key();
        send(key, 64, command(key, "ok"));

        awaitHandled(key, "DUPLICATE", 63);
        assertThat(awaitHandled(key, "EXECUTED", 1)).startsWith("1 ");
        assertThat(effects(key)).isEqualTo(1);
        assertThat(record(key)).startsWith("SUCCEEDED ");
    }

    @Test
    void aPoisonCommandIsRecordedFailedFinalAndAcknowledgedNotRedeliveredForever() {
        String key = key();
        send(key, 1, command(key, "reject"));

        awaitHandled(key, "FAILED_FINAL", 1);
        String handled = awaitHandled(key, "DUPLICATE", 1);
        assertThat(handled).as("its one redelivery acknowledged").endsWith("[FAILED_FINAL, DUPLICATE]");
        assertThat(effects(key)).isZero();
        assertThat(record(key)).isEqualTo("FAILED_FINAL 1 422");
    }

    @Test
    void aRetryableFailureIsRedeliveredAndExecutedOnceInTheEnd() {
        String key = key();
        send(key, 1, command(key, "fail-until-3"));

        String handled = awaitHandled(key, "EXECUTED", 1);
        assertThat(handled).endsWith("[REDELIVERED, REDELIVERED, EXECUTED]");
        assertThat(effects(key)).isEqualTo(1);
        assertThat(record(key)).as("the attempts the record counts").isEqualTo("SUCCEEDED 3 204");
    }

    @Test
    void aCommandFailingOnEveryDeliveryEndsInTheDeadLetterQueueAndItsRecordSaysSo() {
        String key = key();
        send(key, 1, command(key, "fail-always"));

        String handled = awaitHandled(key, "DEAD_LETTERED", 1);
        assertThat(handled).endsWith("[REDELIVERED, REDELIVERED, REDELIVERED, REDELIVERED, DEAD_LETTERED]");
        Api.Reply dead = api.post("commands/dead-letters/" + key + "/take", "").send();
        assertThat(dead.status()).as("kept by the broker's dead-letter queue").isEqualTo(200);
        assertThat(effects(key)).isZero();
        assertThat(record(key)).isEqualTo("FAILED_RETRYABLE 5 503");
    }

    private void send(String key, int copies, String body) {
        Api.Reply sent = api.post("commands/send?copies=" + copies + "&key=" + key, body).send();
        assertThat(sent.status()).as(sent.text()).isEqualTo(204);
    }

    // "count [handling of every delivery]", once the server has seen atLeast deliveries handled so.
    private String awaitHandled(String key, String handling, int atLeast) {
        Api.Reply reply = api.get("commands/handled/" + key + "/" + handling + "?atLeast=" + atLeast).send();
        assertThat(reply.status()).as(handling + ": " + reply.text()).isEqualTo(200);
        return reply.text();
    }

    private long effects(String key) {
        return Long.parseLong(api.get("commands/effects/" + key).send().text());
    }

    private String record(String key) {
        return api.get("commands/record/" + key).send().text();
    }

    private static String command(String key, String behaviour) {
        return "{\"reference\":\"" + key + "\",\"amount\":10.00,\"behaviour\":\"" + behaviour + "\"}";
    }

    private static String key() {
        return UUID.randomUUID().toString();
    }
}
