package dev.idempotency.demo;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.ProcessingException;
import jakarta.ws.rs.client.Client;
import jakarta.ws.rs.client.Entity;
import jakarta.ws.rs.core.GenericType;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.util.List;

/**
 * Calls the acquirer's payouts API as a service user. It waits at most {@code demo.payouts.read-timeout-ms}
 * (1 s) for an answer: a slow payout leaves the caller not knowing whether the money left.
 */
@ApplicationScoped
public class AcquirerPayoutClient {
    @Inject
    @ConfigProperty(name = "demo.acquirer.url", defaultValue = "http://127.0.0.1:8080/demo/api")
    String baseUrl;
    @Inject
    @ConfigProperty(name = "demo.service.password")
    String servicePassword;
    @Inject
    @ConfigProperty(name = "demo.payouts.read-timeout-ms", defaultValue = "1000")
    long readTimeoutMillis;

    private Client client;

    @PostConstruct
    void open() {
        client = AcquirerClients.asServiceUser(servicePassword, readTimeoutMillis).register(DemoFaults.Forwarded.class)
                .build();
    }

    @PreDestroy
    void close() {
        client.close();
    }

    /** Pays out under the caller's reference. */
    public PayoutView payout(PayoutRequest request, String reference) {
        PayoutRequest body = new PayoutRequest();
        body.beneficiary = request.beneficiary;
        body.amount = request.amount;
        body.currency = request.currency;
        body.reference = reference;
        var call = client.target(baseUrl).path("acquirer/payouts").request(MediaType.APPLICATION_JSON);
        try (Response response = call.post(Entity.json(body))) {
            if (response.getStatus() != 201) {
                throw response.getStatus() >= 500 ? DemoProblem.transientFailure()
                        : DemoProblem.acquirerFailed(response.getStatus());
            }
            return response.readEntity(PayoutView.class);
        } catch (ProcessingException timedOut) {
            // No answer in time: the payout may or may not have happened. The retry asks the acquirer
            // (PayoutOutcomeResolver) before paying out again, since this API does not deduplicate.
            throw DemoProblem.payoutOutcomeUnknown();
        }
    }

    /**
     * The acquirer's payouts under a reference.
     *
     * @throws IllegalStateException when the acquirer cannot be asked now
     */
    public List<PayoutView> find(String reference) {
        try (Response response = client.target(baseUrl).path("acquirer/payouts").queryParam("reference", reference)
                .request(MediaType.APPLICATION_JSON).get()) {
            if (response.getStatus() != 200) {
                throw new IllegalStateException("the acquirer answered " + response.getStatus());
            }
            return response.readEntity(new GenericType<List<PayoutView>>() { });
        } catch (ProcessingException unreachable) {
            throw new IllegalStateException("the acquirer did not answer", unreachable);
        }
    }
}
