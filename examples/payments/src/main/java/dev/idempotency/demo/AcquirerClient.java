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

    // One send: a payment runs under its claim's lease and its client waits, so it does not wait here for an acquirer
    // still in flight; what the answer means (the acquirer's Idempotency-State, or none: the IETF draft's statuses) is
    // still the client half's to say, and an outcome nobody can tell comes back typed. The payment's own client
    // retries (503 + Retry-After), with the same key, and so with the same derived key here. A caller outside a
    // request (a batch, a scheduler) gives it attempts: IdempotentCalls.configured().
    private static final IdempotentCalls CALLS = IdempotentCalls.within(1, java.time.Duration.ofSeconds(15));

    private Client client;

    @PostConstruct
    void open() {
        client = AcquirerClients.asServiceUser(servicePassword, 10_000)
                .register(new DerivedKeyClientFilter("acquirer.charge"))
                .register(DemoFaults.Forwarded.class)
                .build();
    }

    @PreDestroy
    void close() {
        client.close();
    }

    /**
     * Charges the payment and returns the charge id, through the library's client half ({@link IdempotentCalls}) with
     * the derived key the filter sets: what nobody can tell (no answer, or the charge still in progress) fails the
     * payment retryably, and its retry sends the same key.
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
                // Busy or failing: try again later, with the same key.
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
