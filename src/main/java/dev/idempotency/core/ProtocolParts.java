package dev.idempotency.core;

import dev.idempotency.spi.OutcomeCache;
import dev.idempotency.spi.RecordStore;

import java.time.Clock;

/**
 * What the protocol's phases share: the record store and its cache, the protocol's own transactions, its clock and
 * events, and the one builder, reader and answer set of its records.
 */
record ProtocolParts(RecordStore store, OutcomeCache cache, TransactionBoundary transactions, Clock clock,
                     ProtocolEvents events, RecordFactory records, RecordReads reads, ProtocolAnswers answers) {
}
