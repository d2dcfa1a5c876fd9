package dev.idempotency.demo;

import dev.idempotency.jaxrs.DerivedKeyClientFilter;
import dev.idempotency.jaxrs.IdempotentCalls;
import dev.idempotency.jaxrs.OperationOutcomeUnknownException;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
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

    // Three sends within 5 s: what a payment's request can wait for the acquirer before its client is told to retry.
    private static final IdempotentCalls CALLS = IdempotentCalls.within(3, java.time.Duration.ofSeconds(5));

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

    /**
     * Charges the payment and returns the charge id, through the library's client half ({@link IdempotentCalls}):
     * one derived key for every attempt (the filter sets it), sent again while the acquirer says the charge is in
     * progress or may be retried with the same key, within a budget a payment's request can wait; what nobody can
     * tell then (no answer, or still in progress) fails the payment retryably, and its retry sends the same key.
     */
    @DemoFaults.At(DemoFaults.Point.BEFORE_CHARGE)
    public String charge(Payment payment) {
        PaymentRequest body = new PaymentRequest();
        body.merchantOrderNo = payment.merchantOrderNo;
        body.amount = payment.amount;
        body.currency = payment.currency;
        try (Response response = CALLS.run(key -> client.target(baseUrl).path("acquirer/charges")
                .request(MediaType.APPLICATION_JSON).post(Entity.json(body)))) {
            int status = response.getStatus();
            if (status == 422) {
                throw DemoProblem.keyHoldsAnotherPaymentDownstream();
            }
            if (status != 201) {
                // Busy or failing past the budget: try again later, with the same key.
                boolean transientFailure = status >= 500 || status == 409 || status == 425 || status == 429;
                throw transientFailure ? DemoProblem.transientFailure() : DemoProblem.acquirerFailed(status);
            }
            return response.readEntity(ChargeView.class).chargeId;
        } catch (OperationOutcomeUnknownException unknown) {
            // Connection refused or timed out, or still in flight: whether the acquirer charged is unknown; the retry
            // carries the same derived key, so the acquirer answers it with the first charge instead of a second one.
            throw DemoProblem.transientFailure();
        }
    }
}
