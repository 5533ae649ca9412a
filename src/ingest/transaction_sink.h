#pragma once

#include <cstdint>
#include <span>

#include "common/status.h"
#include "ingest/chain/block_sink.h"

namespace adserver::ingest {

// Where bulk activity imports hand the rows that name a transaction (a tx hash column, or
// `txHash` in adserver's NDJSON), so that they can be attributed as onchain conversions like the
// live indexer's blocks (issue 15). Only rows the sink wants are collected. Implementations are
// thread-safe: imports run on admin worker threads.
class TransactionSink {
 public:
  virtual ~TransactionSink() = default;
  // Whether an interaction with `project_id` at `unix_seconds` can matter (a conversion rule
  // names the project and the time is inside the longest window in use). Called per row: fast.
  virtual bool Wants(int64_t project_id, int64_t unix_seconds) const = 0;
  // Interactions an import read, in input order, each with its chain, tx hash, log index (if
  // the row has one), block number (0 when unknown) and time; at most kMaxImportTransactions
  // interactions in all. Called BEFORE the import's activity is written and recorded as
  // imported: not OK fails the import (nothing written, safe to send again), and a crash
  // before the import is recorded makes the client send it again, so it must be idempotent.
  virtual Status OnImported(std::span<const chain::ChainInteraction> interactions) = 0;
};

// Per import: transactions past this many are counted as dropped, not attributed (bounds the
// memory an upload can take; ~100 bytes each).
inline constexpr size_t kMaxImportTransactions = 1'000'000;

}  // namespace adserver::ingest
