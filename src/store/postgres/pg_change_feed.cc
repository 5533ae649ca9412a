#include "store/postgres/pg_change_feed.h"

#include <algorithm>
#include <utility>

#include "store/postgres/detail/pg_connection.h"

namespace adserver::store {

using pg_detail::Param;
using pg_detail::PgConnection;
using pg_detail::PgResult;

namespace {
constexpr std::string_view kChannel = "adserver_changes";
}  // namespace

Status BumpChangeVersion(PgConnection& conn, std::string_view name) {
  if (!conn.in_transaction()) return InternalError("BumpChangeVersion needs an open transaction");
  ADS_RETURN_IF_ERROR(conn.Exec("INSERT INTO change_versions (name, version) VALUES ($1, 1) "
                                "ON CONFLICT (name) DO UPDATE "
                                "SET version = change_versions.version + 1",
                                {Param(name)})
                          .status());
  // Delivered at commit, once per channel and payload however many bumps the transaction made.
  return conn.Exec("SELECT pg_notify($1, $2)", {Param(kChannel), Param(name)}).status();
}

PgChangeFeed::PgChangeFeed(std::string url, std::string name)
    : url_(std::move(url)), name_(std::move(name)) {}

PgChangeFeed::~PgChangeFeed() = default;

Result<std::unique_ptr<PgChangeFeed>> PgChangeFeed::Open(const std::string& url, std::string name) {
  auto feed = std::unique_ptr<PgChangeFeed>(new PgChangeFeed(url, std::move(name)));
  ADS_RETURN_IF_ERROR(feed->Connect());
  return feed;
}

Status PgChangeFeed::Connect() {
  conn_.reset();
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Open(url_));
  ADS_RETURN_IF_ERROR(conn->ExecScript("LISTEN " + std::string(kChannel)));
  conn_ = std::move(conn);
  return OkStatus();
}

Result<int64_t> PgChangeFeed::Version() {
  if (conn_ == nullptr) ADS_RETURN_IF_ERROR(Connect());
  Result<PgResult> r = conn_->Exec(
      "SELECT coalesce((SELECT version FROM change_versions WHERE name = $1), 0)", {Param(name_)});
  if (!r.ok()) {
    conn_.reset();  // LISTEN again on a new session at the next call
    return r.status();
  }
  return r->Int(0, 0);
}

Result<int64_t> PgChangeFeed::WaitForChange(int64_t seen, std::chrono::milliseconds timeout,
                                            std::chrono::milliseconds poll) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    // Read first: this also covers changes made while no session was listening. A read that
    // finds the session gone is tried once more on a new one.
    Result<int64_t> read = Version();
    if (!read.ok()) read = Version();
    ADS_ASSIGN_OR_RETURN(int64_t version, std::move(read));
    if (version != seen) return version;
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return version;
    auto wait =
        std::min(poll, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now));
    Result<std::vector<std::string>> notified = conn_->WaitForNotifications(wait);
    if (!notified.ok()) conn_.reset();  // a new session (and LISTEN) at the next read
  }
}

}  // namespace adserver::store
