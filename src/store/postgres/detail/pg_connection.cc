#include "store/postgres/detail/pg_connection.h"

#include <libpq-fe.h>
#include <poll.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

namespace adserver::store::pg_detail {
namespace {

// SQLSTATE classes a caller may retry: connection exceptions (08), the server shutting down or
// out of resources (57P, 53), and transaction rollbacks for serialization or deadlock (40).
bool Retryable(std::string_view state) {
  return state.starts_with("08") || state.starts_with("57P") || state.starts_with("53") ||
         state == "40001" || state == "40P01";
}

std::string FirstLine(const char* message) {
  std::string_view text = message != nullptr ? message : "";
  size_t end = text.find('\n');
  return std::string(text.substr(0, end));
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

PgResult::PgResult(pg_result* result) : result_(result) {}
PgResult::~PgResult() {
  if (result_ != nullptr) PQclear(result_);
}
PgResult::PgResult(PgResult&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}
PgResult& PgResult::operator=(PgResult&& other) noexcept {
  if (this != &other) {
    if (result_ != nullptr) PQclear(result_);
    result_ = std::exchange(other.result_, nullptr);
  }
  return *this;
}

int PgResult::rows() const { return result_ != nullptr ? PQntuples(result_) : 0; }

bool PgResult::IsNull(int row, int column) const { return PQgetisnull(result_, row, column) == 1; }

std::string_view PgResult::Text(int row, int column) const {
  return {PQgetvalue(result_, row, column), static_cast<size_t>(PQgetlength(result_, row, column))};
}

Result<int64_t> PgResult::Int(int row, int column) const {
  std::string_view text = Text(row, column);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return InternalError("column " + std::to_string(column) + " is not an integer");
  }
  return v;
}

Result<std::vector<uint8_t>> PgResult::Bytes(int row, int column) const {
  std::string_view text = Text(row, column);
  if (!text.starts_with("\\x") || text.size() % 2 != 0) {
    return InternalError("column " + std::to_string(column) + " is not bytea in hex form");
  }
  std::vector<uint8_t> out;
  out.reserve((text.size() - 2) / 2);
  for (size_t i = 2; i < text.size(); i += 2) {
    int hi = HexDigit(text[i]), lo = HexDigit(text[i + 1]);
    if (hi < 0 || lo < 0) return InternalError("bytea column has a non-hex digit");
    out.push_back(static_cast<uint8_t>(hi << 4 | lo));
  }
  return out;
}

int64_t PgResult::Changed() const {
  const char* n = result_ != nullptr ? PQcmdTuples(result_) : "";
  int64_t v = 0;
  std::from_chars(n, n + std::strlen(n), v);
  return v;
}

PgParam BytesParam(const uint8_t* data, size_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\\x";
  out.reserve(2 + 2 * size);
  for (size_t i = 0; i < size; ++i) {
    out += kHex[data[i] >> 4];
    out += kHex[data[i] & 15];
  }
  return out;
}

Result<std::unique_ptr<PgConnection>> PgConnection::Open(const std::string& url) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &error);
  if (options == nullptr) {
    std::string message = FirstLine(error);
    PQfreemem(error);
    return InvalidArgumentError("invalid PostgreSQL URL: " + message);
  }
  PQconninfoFree(options);
  pg_conn* conn = PQconnectdb(url.c_str());
  if (conn == nullptr) return InternalError("libpq cannot allocate a connection");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string message = FirstLine(PQerrorMessage(conn));
    PQfinish(conn);
    return UnavailableError("cannot connect to PostgreSQL: " + message);
  }
  auto out = std::unique_ptr<PgConnection>(new PgConnection(conn, url));
  // Quiet NOTICEs (e.g. "relation already exists, skipping") and fixed, unambiguous settings.
  ADS_RETURN_IF_ERROR(out->ExecScript(
      "SET client_min_messages = warning; SET TIME ZONE 'UTC'; SET bytea_output = 'hex'"));
  return out;
}

PgConnection::PgConnection(pg_conn* conn, std::string url) : conn_(conn), url_(std::move(url)) {}

PgConnection::~PgConnection() { PQfinish(conn_); }

Status PgConnection::EnsureConnected() {
  if (PQstatus(conn_) == CONNECTION_OK) return OkStatus();
  if (in_transaction_) {
    return UnavailableError("lost the PostgreSQL connection inside a transaction");
  }
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) {
    return UnavailableError("cannot reconnect to PostgreSQL: " + FirstLine(PQerrorMessage(conn_)));
  }
  return ExecScript(
      "SET client_min_messages = warning; SET TIME ZONE 'UTC'; SET bytea_output = 'hex'");
}

Status PgConnection::ErrorOf(pg_result* result, std::string_view sql) {
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string message =
      FirstLine(result != nullptr ? PQresultErrorMessage(result) : PQerrorMessage(conn_));
  if (message.empty()) message = FirstLine(PQerrorMessage(conn_));
  std::string what = message + " (in: " + std::string(sql.substr(0, 60)) + ")";
  if (state == nullptr || PQstatus(conn_) != CONNECTION_OK || Retryable(state)) {
    return UnavailableError("PostgreSQL: " + what);
  }
  // Unique, foreign-key and restrict violations: the caller's Conflict (as the SQLite adapter
  // maps them); CHECK and NOT NULL violations are the caller's bugs: Internal.
  std::string_view code(state);
  if (code == "23505" || code == "23503" || code == "23001") {
    return ConflictError("PostgreSQL: " + what);
  }
  return InternalError("PostgreSQL: " + what);
}

Result<PgResult> PgConnection::Exec(std::string_view sql, const std::vector<PgParam>& params) {
  ADS_RETURN_IF_ERROR(EnsureConnected());
  std::string text(sql);
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const PgParam& p : params) values.push_back(p ? p->c_str() : nullptr);
  pg_result* raw = PQexecParams(conn_, text.c_str(), static_cast<int>(values.size()), nullptr,
                                values.data(), nullptr, nullptr, 0);
  PgResult result(raw);
  ExecStatusType status = raw != nullptr ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) return ErrorOf(raw, sql);
  return result;
}

Status PgConnection::ExecScript(std::string_view sql) {
  std::string text(sql);
  pg_result* raw = PQexec(conn_, text.c_str());
  PgResult result(raw);
  ExecStatusType status = raw != nullptr ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) return ErrorOf(raw, sql);
  return OkStatus();
}

Result<std::vector<std::string>> PgConnection::WaitForNotifications(
    std::chrono::milliseconds timeout) {
  std::vector<std::string> channels;
  auto drain = [&] {
    while (PGnotify* n = PQnotifies(conn_)) {
      channels.emplace_back(n->relname);
      PQfreemem(n);
    }
  };
  if (PQstatus(conn_) != CONNECTION_OK) return UnavailableError("PostgreSQL session lost");
  drain();  // delivered with an earlier result
  if (!channels.empty()) return channels;
  pollfd fd{.fd = PQsocket(conn_), .events = POLLIN, .revents = 0};
  if (fd.fd < 0) return UnavailableError("PostgreSQL session has no socket");
  int ready = poll(&fd, 1, static_cast<int>(timeout.count()));
  if (ready < 0 && errno != EINTR) return UnavailableError("poll on the PostgreSQL socket failed");
  if (ready > 0) {
    if (PQconsumeInput(conn_) == 0 || PQstatus(conn_) != CONNECTION_OK) {
      return UnavailableError("PostgreSQL session lost: " + FirstLine(PQerrorMessage(conn_)));
    }
    drain();
  }
  return channels;
}

Status PgConnection::Begin(std::string_view begin) {
  ADS_RETURN_IF_ERROR(EnsureConnected());
  Status begun = ExecScript(begin);
  // A session the server closed (a restart, a failover) is found only when used: nothing ran
  // yet, so the transaction is begun again on a new session once.
  if (!begun.ok() && PQstatus(conn_) != CONNECTION_OK) {
    ADS_RETURN_IF_ERROR(EnsureConnected());
    begun = ExecScript(begin);
  }
  ADS_RETURN_IF_ERROR(begun);
  in_transaction_ = true;
  return OkStatus();
}

Status PgConnection::Commit() {
  in_transaction_ = false;
  return ExecScript("COMMIT");
}

void PgConnection::Rollback() {
  if (!in_transaction_) return;
  in_transaction_ = false;
  if (PQstatus(conn_) == CONNECTION_OK) (void)ExecScript("ROLLBACK");
}

Result<PgTransaction> PgTransaction::Begin(PgConnection& conn, std::string_view begin) {
  ADS_RETURN_IF_ERROR(conn.Begin(begin));
  return PgTransaction(&conn);
}

PgTransaction::~PgTransaction() {
  if (conn_ != nullptr) conn_->Rollback();
}

Status PgTransaction::Commit() {
  PgConnection* conn = std::exchange(conn_, nullptr);
  return conn->Commit();
}

}  // namespace adserver::store::pg_detail
