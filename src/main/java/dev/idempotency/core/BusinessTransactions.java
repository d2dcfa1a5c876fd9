package dev.idempotency.core;

/** Where an execution's business transaction comes from (JTA behind it, in the jta adapter). */
@FunctionalInterface
public interface BusinessTransactions {

    /** The caller's transaction when one is active (joined), else a new one the library owns and commits. */
    BusinessTransaction joinOrBegin();
}
