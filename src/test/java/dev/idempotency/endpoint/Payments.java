package dev.idempotency.endpoint;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;

import java.util.List;

/** Access to the business table through Hibernate, on the record table's JTA DataSource. */
@ApplicationScoped
public class Payments {
    private volatile EntityManagerFactory factory;

    public void use(EntityManagerFactory emf) {
        this.factory = emf;
    }

    /** Persists and flushes in the current JTA transaction, so a unique violation surfaces here. */
    public void persist(Payment payment) {
        EntityManager em = factory.createEntityManager();
        try {
            em.joinTransaction();
            em.persist(payment);
            em.flush();
        } finally {
            em.close();
        }
    }

    public Payment find(String id) {
        EntityManager em = factory.createEntityManager();
        try {
            return em.find(Payment.class, id);
        } finally {
            em.close();
        }
    }

    public List<Payment> byOrder(String tenant, String merchantOrderNo) {
        EntityManager em = factory.createEntityManager();
        try {
            return em.createQuery("select p from Payment p where p.tenant = :t and p.merchantOrderNo = :m", Payment.class)
                    .setParameter("t", tenant).setParameter("m", merchantOrderNo).getResultList();
        } finally {
            em.close();
        }
    }
}
