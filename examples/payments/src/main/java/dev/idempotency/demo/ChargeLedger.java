package dev.idempotency.demo;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;

/** The acquirer's charges, written in its request's transaction. */
@ApplicationScoped
public class ChargeLedger {
    @PersistenceContext(unitName = "payments")
    EntityManager em;

    /**
     * Records a charge. A fault point: with the payment's {@code X-Demo-Acquirer-Delay-Ms} forwarded, the acquirer takes
     * that long before it records the charge, so that the payments service's call times out while the charge still
     * commits afterwards (its answer is lost; the payment's retry, under the same derived key, gets it).
     */
    @Transactional(Transactional.TxType.MANDATORY)
    @DemoFaults.At(DemoFaults.Point.BEFORE_SETTLEMENT)
    public void record(Charge charge) {
        em.persist(charge);
    }
}
