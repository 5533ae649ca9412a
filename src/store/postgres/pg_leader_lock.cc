#include "store/postgres/pg_leader_lock.h"

#include <string_view>
#include <utility>

#include "store/postgres/detail/pg_connection.h"

namespace adserver::store {

using pg_detail::Param;
using pg_detail::PgConnection;
using pg_detail::PgResult;

namespace {

// The client side of the same: libpq's keepalives and TCP_USER_TIMEOUT, so that a check from
// a node cut off from PostgreSQL fails within seconds instead of hanging.
std::string WithKeepalives(const std::string& url) {
  constexpr std::string_view kOptions =
      "keepalives=1&keepalives_idle=2&keepalives_interval=1&keepalives_count=3"
      "&tcp_user_timeout=5000&connect_timeout=5";
  if (url.starts_with("postgresql://") || url.starts_with("postgres://")) {
    return url + (url.find('?') == std::string::npos ? "?" : "&") + std::string(kOptions);
  }
  std::string kv(kOptions);
  for (char& c : kv) {
    if (c == '&') c = ' ';
  }
  return url + " " + kv;
}

}  // namespace

PgLeaderLock::PgLeaderLock(std::string url, int64_t key) : url_(WithKeepalives(url)), key_(key) {}

PgLeaderLock::~PgLeaderLock() { Release(); }

Result<std::unique_ptr<PgLeaderLock>> PgLeaderLock::Open(const std::string& url, int64_t key) {
  auto lock = std::unique_ptr<PgLeaderLock>(new PgLeaderLock(url, key));
  ADS_RETURN_IF_ERROR(lock->Connect());
  return lock;
}

Status PgLeaderLock::Connect() {
  conn_.reset();
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Open(url_));
  // The server gives up on a vanished peer after about 5 s, and with it releases the lock.
  ADS_RETURN_IF_ERROR(
      conn->ExecScript("SET tcp_keepalives_idle = 2; SET tcp_keepalives_interval = 1; "
                       "SET tcp_keepalives_count = 3"));
  conn_ = std::move(conn);
  return OkStatus();
}

Result<bool> PgLeaderLock::TryLead() {
  if (leading_) {
    // Still the same session? A lock is held only as long as the session that took it.
    Result<PgResult> alive = conn_->Exec("SELECT 1");
    if (alive.ok()) return true;
    leading_ = false;
    conn_.reset();
    return false;
  }
  if (conn_ == nullptr) ADS_RETURN_IF_ERROR(Connect());
  Result<PgResult> taken = conn_->Exec("SELECT pg_try_advisory_lock($1)", {Param(key_)});
  if (!taken.ok()) {
    conn_.reset();  // reconnect at the next try
    return taken.status();
  }
  leading_ = taken->Text(0, 0) == "t";
  return leading_;
}

void PgLeaderLock::Release() {
  if (leading_ && conn_ != nullptr) {
    (void)conn_->Exec("SELECT pg_advisory_unlock($1)", {Param(key_)});
  }
  leading_ = false;
}

}  // namespace adserver::store
