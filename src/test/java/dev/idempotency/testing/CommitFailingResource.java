package dev.idempotency.testing;

import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

/**
 * A resource manager that prepares and then answers its commit with a heuristic hazard (XA_HEURHAZ: it does
 * not know whether its branch committed, as after a dropped connection). The transaction manager's commit
 * throws HeuristicMixedException; beside the database (committed as the last resource) the work is
 * committed although the application sees the commit fail.
 */
public final class CommitFailingResource implements XAResource {
    private final java.util.concurrent.atomic.AtomicInteger hazards = new java.util.concurrent.atomic.AtomicInteger();

    @Override
    public void commit(Xid xid, boolean onePhase) throws XAException {
        hazards.incrementAndGet();
        throw new XAException(XAException.XA_HEURHAZ);
    }

    /** How many commits this resource answered with the hazard: a test proves with it that the hazard happened. */
    public int hazards() {
        return hazards.get();
    }

    @Override
    public void end(Xid xid, int flags) {
    }

    @Override
    public void forget(Xid xid) {
    }

    @Override
    public int getTransactionTimeout() {
        return 0;
    }

    @Override
    public boolean isSameRM(XAResource other) {
        return other == this;
    }

    @Override
    public int prepare(Xid xid) {
        return XA_OK;
    }

    @Override
    public Xid[] recover(int flag) {
        return new Xid[0];
    }

    @Override
    public void rollback(Xid xid) {
    }

    @Override
    public boolean setTransactionTimeout(int seconds) {
        return false;
    }

    @Override
    public void start(Xid xid, int flags) {
    }
}
