package dev.idempotency.jta;

import jakarta.transaction.TransactionManager;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * What a server needs told about a transaction the library begins itself, beside {@code TransactionManager.begin()}
 * and {@code commit()}. On GlassFish and Payara, a JDBC connection is enlisted in a transaction only once the current
 * component invocation knows it: their own {@code @Transactional} interceptors call
 * {@code TransactionManagerHelper.preInvokeTx(true)} after {@code begin()} and {@code postInvokeTx(false, true)}
 * before the end, and without those calls the statements of a transaction begun by a CDI interceptor run in
 * auto-commit (payara/Payara#505). Found by reflection on the server's transaction manager, so that the library
 * compiles against no server; on WildFly (Narayana) there is nothing to call.
 */
final class ServerTransactionHooks {
    private final MethodHandle afterBegin;
    private final MethodHandle beforeEnd;

    private ServerTransactionHooks(MethodHandle afterBegin, MethodHandle beforeEnd) {
        this.afterBegin = afterBegin;
        this.beforeEnd = beforeEnd;
    }

    static ServerTransactionHooks of(TransactionManager tm) {
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        try {
            MethodHandle begin = lookup.findVirtual(tm.getClass(), "preInvokeTx",
                    MethodType.methodType(void.class, boolean.class));
            MethodHandle end = lookup.findVirtual(tm.getClass(), "postInvokeTx",
                    MethodType.methodType(void.class, boolean.class, boolean.class));
            return new ServerTransactionHooks(MethodHandles.insertArguments(begin, 1, true),
                    MethodHandles.insertArguments(end, 1, false, true));
        } catch (NoSuchMethodException | IllegalAccessException notThisServer) {
            return new ServerTransactionHooks(null, null);
        }
    }

    /** Whether the server wants to be told (GlassFish, Payara). */
    boolean present() {
        return afterBegin != null;
    }

    /** Right after {@code begin()}: the current invocation's resources join the new transaction. */
    void afterBegin(TransactionManager tm) {
        call(afterBegin, tm);
    }

    /** Right before {@code commit()} or {@code rollback()} of a transaction the library began. */
    void beforeEnd(TransactionManager tm) {
        call(beforeEnd, tm);
    }

    private static void call(MethodHandle hook, TransactionManager tm) {
        if (hook == null) {
            return;
        }
        try {
            hook.invoke(tm);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable checked) {
            throw new IllegalStateException("the server's transaction hook failed", checked);
        }
    }
}
