package dev.idempotency.demo;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;

import java.util.List;
import java.util.Optional;

/** The payments table. */
@ApplicationScoped
public class Payments {
    @PersistenceContext(unitName = "payments")
    EntityManager em;

    /** Inserts and flushes, so that the unique constraint on (tenant, merchant order) answers now. */
    @Transactional(Transactional.TxType.MANDATORY)
    public void insert(Payment payment) {
        em.persist(payment);
        em.flush();
    }

    @Transactional(Transactional.TxType.MANDATORY)
    @DemoFaults.At(DemoFaults.Point.AFTER_CHARGE)
    public void update(Payment payment) {
        em.merge(payment);
        em.flush();
    }

    public Optional<Payment> find(String tenant, String id) {
        Payment p = em.find(Payment.class, id);
        return Optional.ofNullable(p).filter(found -> found.tenant.equals(tenant));
    }

    public List<Payment> byOrder(String tenant, String merchantOrderNo) {
        return em.createNamedQuery("Payment.byOrder", Payment.class).setParameter("tenant", tenant)
                .setParameter("merchantOrderNo", merchantOrderNo).getResultList();
    }

    /** After a unique violation: the committed payment that holds the order, read in a transaction of its own. */
    @Transactional(Transactional.TxType.REQUIRES_NEW)
    public Optional<String> holderOf(String tenant, String merchantOrderNo) {
        return byOrder(tenant, merchantOrderNo).stream().map(p -> p.id).findFirst();
    }
}
