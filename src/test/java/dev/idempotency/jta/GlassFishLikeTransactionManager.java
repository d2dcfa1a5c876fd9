package dev.idempotency.jta;

import jakarta.transaction.HeuristicMixedException;
import jakarta.transaction.HeuristicRollbackException;
import jakarta.transaction.InvalidTransactionException;
import jakarta.transaction.NotSupportedException;
import jakarta.transaction.RollbackException;
import jakarta.transaction.SystemException;
import jakarta.transaction.Transaction;
import jakarta.transaction.TransactionManager;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Narayana's transaction manager with the two methods GlassFish's and Payara's ({@code TransactionManagerHelper})
 * add, recording when they are called among begin, commit and rollback.
 */
public class GlassFishLikeTransactionManager implements TransactionManager {
    final List<String> calls = new CopyOnWriteArrayList<>();
    private final TransactionManager delegate;

    GlassFishLikeTransactionManager(TransactionManager delegate) {
        this.delegate = delegate;
    }

    public void preInvokeTx(boolean checkServletInvocation) {
        calls.add("preInvokeTx(" + checkServletInvocation + ")");
    }

    public void postInvokeTx(boolean suspendTx, boolean isCMT) {
        calls.add("postInvokeTx(" + suspendTx + ", " + isCMT + ")");
    }

    @Override
    public void begin() throws NotSupportedException, SystemException {
        calls.add("begin");
        delegate.begin();
    }

    @Override
    public void commit() throws RollbackException, HeuristicMixedException, HeuristicRollbackException,
            SecurityException, IllegalStateException, SystemException {
        calls.add("commit");
        delegate.commit();
    }

    @Override
    public int getStatus() throws SystemException {
        return delegate.getStatus();
    }

    @Override
    public Transaction getTransaction() throws SystemException {
        return delegate.getTransaction();
    }

    @Override
    public void resume(Transaction tobj) throws InvalidTransactionException, IllegalStateException, SystemException {
        delegate.resume(tobj);
    }

    @Override
    public void rollback() throws IllegalStateException, SecurityException, SystemException {
        calls.add("rollback");
        delegate.rollback();
    }

    @Override
    public void setRollbackOnly() throws IllegalStateException, SystemException {
        delegate.setRollbackOnly();
    }

    @Override
    public void setTransactionTimeout(int seconds) throws SystemException {
        delegate.setTransactionTimeout(seconds);
    }

    @Override
    public Transaction suspend() throws SystemException {
        return delegate.suspend();
    }
}
