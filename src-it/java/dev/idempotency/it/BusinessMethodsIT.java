package dev.idempotency.it;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idempotency.it.calls.CallsApplication;
import dev.idempotency.it.calls.TransferResource;
import dev.idempotency.it.calls.Transfers;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.EmptyAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.File;
import java.net.URISyntaxException;
import java.net.URL;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An idempotent CDI business method on a real server (WildFly and Payara Micro), called by the application's own
 * code: its key an {@code @IdempotencyKey} parameter, its result a record stored as JSON by the server's JSON-B,
 * its record and its write on the server's JTA DataSource, in the caller's transaction when there is one.
 */
@ExtendWith(ArquillianExtension.class)
class BusinessMethodsIT {
    @Deployment(testable = false)
    static WebArchive calls() {
        return ShrinkWrap.create(WebArchive.class, "calls.war")
                .addClasses(CallsApplication.class, TransferResource.class, Transfers.class, Transfers.Receipt.class,
                        Transfers.TransferRefused.class)
                .addAsLibrary(new File(System.getProperty("it.library")))
                .addAsWebInfResource(EmptyAsset.INSTANCE, "beans.xml");
    }

    @ArquillianResource
    URL base;
    private Api api;

    @BeforeEach
    void client() throws URISyntaxException {
        api = new Api(base.toURI());
        assertThat(api.post("transfers/table", null).send().status()).isEqualTo(204);
    }

    @Test
    void aSecondCallWithTheKeyReturnsTheFirstReceiptAndWritesNothing() {
        String key = key();
        Api.Reply first = transfer(key, "acme", 1250);
        Api.Reply again = transfer(key, "acme", 1250);

        assertThat(first.status()).as(first.text()).isEqualTo(200);
        assertThat(again.status()).isEqualTo(200);
        assertThat(again.json()).as("the stored receipt, read back as the record type").isEqualTo(first.json());
        assertThat(first.json().get("reference").asText()).isNotEmpty();
        assertThat(effects(key)).isEqualTo(1);
    }

    @Test
    void theKeyWithOtherArgumentsIsRefusedAsAMisuse() {
        String key = key();
        transfer(key, "acme", 100);
        Api.Reply misuse = transfer(key, "acme", 999);

        assertThat(misuse.status()).isEqualTo(422);
        assertThat(misuse.header("content-type")).startsWith("application/problem+json");
        assertThat(misuse.json().get("type").asText()).endsWith("/fingerprint-mismatch");
        assertThat(effects(key)).isEqualTo(1);
    }

    @Test
    void sixteenConcurrentCallsWithOneKeyWriteOnce() throws Exception {
        String key = key();
        ExecutorService callers = Executors.newFixedThreadPool(16);
        List<CompletableFuture<Api.Reply>> replies = new ArrayList<>();
        try {
            for (int i = 0; i < 16; i++) {
                replies.add(CompletableFuture.supplyAsync(() -> transfer(key, "acme", 700), callers));
            }
            List<JsonNode> receipts = new ArrayList<>();
            for (CompletableFuture<Api.Reply> reply : replies) {
                Api.Reply r = reply.get();
                assertThat(r.status()).as(r.text()).isIn(200, 409);
                if (r.status() == 200) {
                    receipts.add(r.json());
                } else {
                    assertThat(r.json().get("type").asText()).endsWith("/request-in-flight");
                }
            }
            assertThat(receipts).isNotEmpty().allSatisfy(receipt -> assertThat(receipt).isEqualTo(receipts.get(0)));
        } finally {
            callers.shutdownNow();
        }
        assertThat(effects(key)).isEqualTo(1);
        assertThat(transfer(key, "acme", 700).status()).isEqualTo(200);
        assertThat(effects(key)).isEqualTo(1);
    }

    @Test
    void aFinalFailureIsRecordedAndEveryLaterCallIsToldWithoutRunning() {
        String key = key();
        Api.Reply refused = transfer(key, "closed", 100);
        Api.Reply again = transfer(key, "closed", 100);

        assertThat(refused.status()).as("the business's own refusal").isEqualTo(422);
        assertThat(refused.text()).isEqualTo("the account is closed");
        assertThat(again.status()).isEqualTo(422);
        assertThat(again.json().get("type").asText()).endsWith("/operation-failed");
        assertThat(again.json().get("detail").asText()).contains(Transfers.TransferRefused.class.getName())
                .doesNotContain("closed");
        assertThat(effects(key)).isZero();
    }

    @Test
    void inTheCallersTransactionARollbackTakesTheWorkAndTheRecordAlongAndTheNextCallRuns() {
        String key = key();
        Api.Reply rolledBack = api.post("transfers/" + key + "/in-transaction?account=acme&cents=300&rollBack=true",
                null).send();
        assertThat(effects(key)).isZero();

        Api.Reply committed = api.post("transfers/" + key + "/in-transaction?account=acme&cents=300", null).send();
        assertThat(committed.status()).as(committed.text()).isEqualTo(200);
        assertThat(effects(key)).isEqualTo(1);
        assertThat(committed.json().get("reference")).isNotEqualTo(rolledBack.status() == 200
                ? rolledBack.json().get("reference") : null);
        assertThat(transfer(key, "acme", 300).json()).as("the committed call's receipt").isEqualTo(committed.json());
        assertThat(effects(key)).isEqualTo(1);
    }

    private Api.Reply transfer(String key, String account, long cents) {
        return api.post("transfers/" + key + "?account=" + account + "&cents=" + cents, null).send();
    }

    private long effects(String key) {
        Api.Reply reply = api.get("transfers/" + key + "/effects").send();
        assertThat(reply.status()).as(reply.text()).isEqualTo(200);
        return Long.parseLong(reply.text().trim());
    }

    private static String key() {
        return "t-" + UUID.randomUUID();
    }
}
