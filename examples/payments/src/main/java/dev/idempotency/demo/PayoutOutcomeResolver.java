package dev.idempotency.demo;

import dev.idempotency.spi.OutcomeResolver;
import dev.idempotency.spi.Resolution;
import dev.idempotency.spi.ResolutionRequest;
import dev.idempotency.spi.StoredResponse;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.MediaType;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Before a payout's next attempt runs, asks the acquirer what the earlier one did, by the reference it
 * sent: settled (answer with that payout, do not pay again), still processing (503, ask again later),
 * nothing (pay out now), or the acquirer cannot say (503).
 */
@ApplicationScoped
public class PayoutOutcomeResolver implements OutcomeResolver {
    @Inject
    AcquirerPayoutClient acquirer;

    @Override
    public boolean handles(String endpoint) {
        return "payouts.create".equals(endpoint);
    }

    @Override
    public Resolution resolve(ResolutionRequest request) {
        List<PayoutView> found;
        try {
            found = acquirer.find(request.derive().apply("acquirer.payout"));
        } catch (IllegalStateException unreachable) {
            return new Resolution.Unknown(unreachable.getMessage());
        }
        if (found.isEmpty()) {
            return new Resolution.NotDone();
        }
        PayoutView payout = found.get(0);
        if (!Payout.SETTLED.equals(payout.status)) {
            return new Resolution.Unknown("the acquirer is still processing payout " + payout.id);
        }
        StoredResponse answer = new StoredResponse(201, Map.of("Content-Type", List.of(MediaType.APPLICATION_JSON)),
                payout.json().getBytes(StandardCharsets.UTF_8), StoredResponse.PLAIN);
        return new Resolution.Done(answer, Optional.of(payout.id));
    }
}
