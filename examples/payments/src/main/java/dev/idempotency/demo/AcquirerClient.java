package dev.idempotency.demo;

import dev.idempotency.jaxrs.DerivedKeyClientFilter;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.ProcessingException;
import jakarta.ws.rs.client.Client;
import jakarta.ws.rs.client.Entity;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.config.inject.ConfigProperty;


/**
 * Calls the acquirer's {@code POST /acquirer/charges} over HTTP, as a service user, carrying the
 * operation's derived idempotency key: every retry of a payment sends the same key, so the acquirer
 * charges once.
 */
@ApplicationScoped
public class AcquirerClient {
    @Inject
    @ConfigProperty(name = "demo.acquirer.url", defaultValue = "http://127.0.0.1:8080/demo/api")
    String baseUrl;
    @Inject
    @ConfigProperty(name = "demo.service.password")
    String servicePassword;

    private Client client;

    @PostConstruct
    void open() {
        client = AcquirerClients.asServiceUser(servicePassword, 10_000)
                .register(new DerivedKeyClientFilter("acquirer.charge"))
                .build();
    }

    @PreDestroy
    void close() {
        client.close();
    }

    /** Charges the payment and returns the charge id. */
    public String charge(Payment payment) {
        PaymentRequest body = new PaymentRequest();
        body.merchantOrderNo = payment.merchantOrderNo;
        body.amount = payment.amount;
        body.currency = payment.currency;
        try (Response response = client.target(baseUrl).path("acquirer/charges").request(MediaType.APPLICATION_JSON)
                .post(Entity.json(body))) {
            int status = response.getStatus();
            if (status != 201) {
                // Busy (the same charge still in flight, or too many at once) or failing: try again later.
                boolean transientFailure = status >= 500 || status == 409 || status == 425 || status == 429;
                throw transientFailure ? DemoProblem.transientFailure() : DemoProblem.acquirerFailed(status);
            }
            return response.readEntity(ChargeView.class).chargeId;
        } catch (ProcessingException unreachable) {
            // Connection refused or timed out: whether the acquirer charged is unknown; the retry carries the
            // same derived key, so the acquirer answers it with the first charge instead of a second one.
            throw DemoProblem.transientFailure();
        }
    }
}
