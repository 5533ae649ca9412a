#pragma once

// Runs a body returning Result<T> in a transaction of a sql::Runner (what every SQL store of
// store/sql shares: one shape of transaction, issue 41 item 1), and serialises writers of one
// kind across every process of a database (the event stores).

#include <optional>
#include <utility>

#include "common/status.h"
#include "store/sql/sql.h"

namespace adserver::store::sql {

// Runs `fn(Connection&)` (returning Result<T>) in a write transaction of `runner` that bumps
// the change versions `bump` (Runner::kCatalog for inventory writes; 0 none) when it commits;
// it commits only when `fn` succeeded.
template <typename T, typename Fn>
Result<T> TransactWrite(Runner& runner, unsigned bump, Fn&& fn) {
  std::optional<Result<T>> out;
  Status s = runner.Write(bump, [&](Connection& c) -> Status {
    out = fn(c);
    return out->status();
  });
  if (!s.ok()) return s;
  return std::move(*out);
}

// Runs `fn(Connection&)` (returning Result<T>) in a consistent read transaction of `runner`.
template <typename T, typename Fn>
Result<T> TransactRead(Runner& runner, Fn&& fn) {
  std::optional<Result<T>> out;
  Status s = runner.Read([&](Connection& c) -> Status {
    out = fn(c);
    return out->status();
  });
  if (!s.ok()) return s;
  return std::move(*out);
}

// A write (bumping nothing) or a read transaction.
template <typename T, typename Fn>
Result<T> Transact(Runner& runner, bool write, Fn&& fn) {
  return write ? TransactWrite<T>(runner, 0, std::forward<Fn>(fn))
               : TransactRead<T>(runner, std::forward<Fn>(fn));
}

// Keys of the writers serialised by WriterLock (any fixed 64-bit numbers, spelled in ASCII).
enum class WriterLockKey : int64_t {
  kClicks = 0x6164737276'636c6b,       // "adsrvclk": click inserts
  kRollUp = 0x6164737276'726f6c,       // "adsrvrol": the click rollup mark
  kConversions = 0x6164737276'636e76,  // "adsrvcnv": conversion writes
};

// Serialises the write transactions that take the same `key` until they end. SQLite needs
// nothing (a write transaction holds the database's only write lock from BEGIN IMMEDIATE);
// PostgreSQL takes a transaction-scoped advisory lock, which every node of a cluster sees.
// REQUIRES: inside a write transaction of `c`.
inline Status WriterLock(Connection& c, WriterLockKey key) {
  if (c.dialect() == Dialect::kSqlite) return OkStatus();
  ADS_ASSIGN_OR_RETURN(Statement s, c.Prepare("SELECT pg_advisory_xact_lock(?1)"));
  return s.Bind(1, static_cast<int64_t>(key)).Run();
}

}  // namespace adserver::store::sql
