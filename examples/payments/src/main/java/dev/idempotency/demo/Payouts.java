package dev.idempotency.demo;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;

import java.util.List;
import java.util.UUID;

/** The acquirer's payouts: each step commits on its own, as a processor that reports progress would. */
@ApplicationScoped
public class Payouts {
    @PersistenceContext(unitName = "payments")
    EntityManager em;

    @Transactional(Transactional.TxType.REQUIRES_NEW)
    public Payout receive(PayoutRequest request) {
        Payout payout = new Payout();
        payout.id = UUID.randomUUID().toString();
        payout.reference = request.reference;
        payout.beneficiary = request.beneficiary;
        payout.amount = request.amount;
        payout.currency = request.currency;
        payout.status = Payout.RECEIVED;
        em.persist(payout);
        return payout;
    }

    @Transactional(Transactional.TxType.REQUIRES_NEW)
    @DemoFaults.At(DemoFaults.Point.BEFORE_SETTLEMENT)
    public Payout settle(String id) {
        Payout payout = em.find(Payout.class, id);
        payout.status = Payout.SETTLED;
        return payout;
    }

    @Transactional(Transactional.TxType.REQUIRES_NEW)
    public List<Payout> byReference(String reference) {
        return em.createNamedQuery("Payout.byReference", Payout.class).setParameter("reference", reference)
                .getResultList();
    }
}
