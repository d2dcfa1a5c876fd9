package dev.idempotency.demo;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyContext;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.validation.Validator;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;

import java.util.List;
import java.util.UUID;

/**
 * The demo's downstream acquirer, itself {@code @Idempotent}: the same derived key from the payments
 * service gets the same charge back instead of a second one.
 */
@Path("acquirer/charges")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class AcquirerResource {
    @PersistenceContext(unitName = "payments")
    EntityManager em;
    @Inject
    IdempotencyContext idempotency;
    @Inject
    Validator validator;
    @Inject
    ChargeLedger ledger;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Transactional
    @Idempotent(endpoint = "acquirer.charges")
    public Response charge(PaymentRequest request, @Context UriInfo uri) {
        DemoProblem.requireValid(validator, request);
        Charge charge = new Charge();
        charge.id = UUID.randomUUID().toString();
        charge.merchantOrderNo = request.merchantOrderNo;
        charge.amount = request.amount;
        charge.currency = request.currency;
        charge.idempotencyKey = idempotency.key().orElseThrow();
        ledger.record(charge);
        return Response.created(uri.getAbsolutePathBuilder().path(charge.id).build()).entity(ChargeView.of(charge)).build();
    }

    @GET
    public List<ChargeView> byOrder(@QueryParam("merchantOrderNo") String merchantOrderNo) {
        if (merchantOrderNo == null || merchantOrderNo.isBlank()) {
            throw DemoProblem.invalid("the query parameter merchantOrderNo is required");
        }
        return em.createNamedQuery("Charge.byOrder", Charge.class).setParameter("merchantOrderNo", merchantOrderNo)
                .getResultList().stream().map(ChargeView::of).toList();
    }
}
