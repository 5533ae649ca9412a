#pragma once

// A thin RAII layer over one libpq connection: parameterised statements with text parameters
// and results, transactions, and libpq's errors mapped to Status (Unavailable when the server
// cannot be reached, shut down or asks for a retry; Internal otherwise). Not thread-safe: an
// adapter guards its connection with a mutex.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

struct pg_conn;
struct pg_result;

namespace adserver::store::pg_detail {

// One statement's result rows (text format).
class PgResult {
 public:
  PgResult() = default;
  explicit PgResult(pg_result* result);
  ~PgResult();
  PgResult(PgResult&& other) noexcept;
  PgResult& operator=(PgResult&& other) noexcept;
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;

  int rows() const;
  bool IsNull(int row, int column) const;
  std::string_view Text(int row, int column) const;
  // The column as a 64-bit integer; Internal if it is not one.
  Result<int64_t> Int(int row, int column) const;
  // A bytea column (hex output format) decoded; Internal if it is not one.
  Result<std::vector<uint8_t>> Bytes(int row, int column) const;
  // Rows changed by an INSERT, UPDATE or DELETE.
  int64_t Changed() const;

 private:
  pg_result* result_ = nullptr;
};

// One statement parameter in text form; nullopt is SQL NULL.
using PgParam = std::optional<std::string>;

class PgConnection {
 public:
  // Connects to `url` (a libpq connection URI or key=value string). Unavailable if the server
  // cannot be reached; InvalidArgument for a malformed URL.
  static Result<std::unique_ptr<PgConnection>> Open(const std::string& url);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one statement with $1..$n parameters. A connection a previous call found broken is
  // reset first (outside a transaction only: a reset inside one would lose its statements).
  Result<PgResult> Exec(std::string_view sql, const std::vector<PgParam>& params = {});
  // Runs statements without parameters (several may be separated by semicolons).
  Status ExecScript(std::string_view sql);

  // Waits up to `timeout` for NOTIFY messages on the channels this session LISTENs to and
  // returns their channel names (empty after a quiet timeout). Unavailable when the session
  // broke meanwhile (LISTENs end with it: the caller opens a new session and LISTENs again).
  Result<std::vector<std::string>> WaitForNotifications(std::chrono::milliseconds timeout);

  // BEGIN, or another statement that opens a transaction (e.g. with an isolation level).
  Status Begin(std::string_view begin = "BEGIN");
  Status Commit();
  // Best effort: rolls back an open transaction (after an error).
  void Rollback();
  bool in_transaction() const { return in_transaction_; }

 private:
  explicit PgConnection(pg_conn* conn, std::string url);
  Status EnsureConnected();
  Status ErrorOf(pg_result* result, std::string_view sql);

  pg_conn* conn_;
  std::string url_;
  bool in_transaction_ = false;
};

// Begin ... Commit; rolls back when destroyed without a Commit.
class PgTransaction {
 public:
  static Result<PgTransaction> Begin(PgConnection& conn, std::string_view begin = "BEGIN");
  PgTransaction(PgTransaction&& other) noexcept : conn_(other.conn_) { other.conn_ = nullptr; }
  PgTransaction& operator=(PgTransaction&&) = delete;
  ~PgTransaction();
  Status Commit();

 private:
  explicit PgTransaction(PgConnection* conn) : conn_(conn) {}
  PgConnection* conn_;
};

// An integer parameter in text form.
inline PgParam Param(int64_t v) { return std::to_string(v); }
inline PgParam Param(std::string_view v) { return std::string(v); }
// A bytea parameter in hex input form ("\x...").
PgParam BytesParam(const uint8_t* data, size_t size);

}  // namespace adserver::store::pg_detail
