#include "store/sqlite/sqlite_event_outbox.h"

#include <chrono>

#include "common/mutex.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store {

using sqlite_detail::Connection;
using sqlite_detail::Statement;
using sqlite_detail::Transaction;

namespace {
constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS click_outbox (
  id              INTEGER PRIMARY KEY,
  decision_id     BLOB NOT NULL,
  publisher_id    INTEGER NOT NULL,
  ad_unit_id      TEXT NOT NULL,
  campaign_id     INTEGER NOT NULL,
  ad_id           INTEGER NOT NULL,
  arm             TEXT NOT NULL,
  served_at       INTEGER NOT NULL,
  clicked_at      INTEGER NOT NULL,
  price           INTEGER NOT NULL,
  person          INTEGER NOT NULL,
  earlier_variant INTEGER NOT NULL,
  status          INTEGER NOT NULL,
  reason          TEXT NOT NULL,
  ip              TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS click_outbox_billed ON click_outbox (decision_id) WHERE status = 0;
CREATE TABLE IF NOT EXISTS advertiser_event_outbox (
  id             INTEGER PRIMARY KEY,
  community_id   INTEGER NOT NULL,
  key_id         INTEGER NOT NULL,
  name           TEXT NOT NULL,
  url            TEXT,
  decision_id    BLOB,
  person         INTEGER NOT NULL,
  created_at     INTEGER NOT NULL,
  invalid_reason TEXT NOT NULL
);
)sql";
static_assert(static_cast<int>(ClickStatus::kBilled) == 0, "the partial index's status");
}  // namespace

SqliteEventOutbox::SqliteEventOutbox(std::unique_ptr<Connection> conn) : conn_(std::move(conn)) {}
SqliteEventOutbox::~SqliteEventOutbox() = default;

Result<std::unique_ptr<SqliteEventOutbox>> SqliteEventOutbox::Open(const std::string& path) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn,
                       Connection::Open(path, /*create=*/true, std::chrono::seconds(5), 512));
  // Full sync: a click answered with its redirect is on disk, whatever happens to the machine.
  ADS_RETURN_IF_ERROR(conn->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"));
  ADS_RETURN_IF_ERROR(conn->Exec(kSchema));
  return std::unique_ptr<SqliteEventOutbox>(new SqliteEventOutbox(std::move(conn)));
}

Status SqliteEventOutbox::Append(std::span<ClickRecord> rows) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*conn_, Transaction::Kind::kWrite));
  for (ClickRecord& r : rows) {
    if (r.status == ClickStatus::kBilled || r.status == ClickStatus::kInvalid) {
      ADS_ASSIGN_OR_RETURN(Statement billed,
                           conn_->Prepare("SELECT 1 FROM click_outbox WHERE decision_id = ?1 AND "
                                          "status = 0"));
      billed.BindBlob(1, r.decision_id.data(), r.decision_id.size());
      ADS_ASSIGN_OR_RETURN(bool already, billed.Step());
      if (already) {
        r.status = ClickStatus::kDuplicate;
        r.reason.clear();
        r.price = 0;
      }
    }
    ADS_ASSIGN_OR_RETURN(
        Statement insert,
        conn_->Prepare("INSERT INTO click_outbox (decision_id, publisher_id, ad_unit_id, "
                       "campaign_id, ad_id, arm, served_at, clicked_at, price, person, "
                       "earlier_variant, status, reason, ip) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                       "?8, ?9, ?10, ?11, ?12, ?13, ?14) RETURNING id"));
    insert.BindBlob(1, r.decision_id.data(), r.decision_id.size())
        .Bind(2, r.publisher_id)
        .Bind(3, r.ad_unit_id)
        .Bind(4, r.campaign_id)
        .Bind(5, r.ad_id)
        .Bind(6, r.arm)
        .Bind(7, r.served_at)
        .Bind(8, r.clicked_at)
        .Bind(9, r.price)
        .Bind(10, static_cast<int64_t>(r.person))
        .Bind(11, int64_t{r.earlier_variant})
        .Bind(12, static_cast<int64_t>(r.status))
        .Bind(13, r.reason)
        .Bind(14, r.ip);
    ADS_ASSIGN_OR_RETURN(bool row, insert.Step());
    if (!row) return InternalError("click_outbox insert returned no id");
    r.id = insert.Int(0);
  }
  return txn.Commit();
}

Result<std::vector<ClickRecord>> SqliteEventOutbox::Oldest(size_t limit) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("SELECT id, decision_id, publisher_id, ad_unit_id, campaign_id, ad_id, arm, "
                     "served_at, clicked_at, price, person, earlier_variant, status, reason, ip "
                     "FROM click_outbox ORDER BY id LIMIT ?1"));
  s.Bind(1, static_cast<int64_t>(limit));
  std::vector<ClickRecord> out;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    ClickRecord r;
    r.id = s.Int(0);
    if (!s.Blob(1, r.decision_id.data(), r.decision_id.size())) {
      return InternalError("click_outbox row " + std::to_string(r.id) + ": bad decision id");
    }
    r.publisher_id = s.Int(2);
    r.ad_unit_id = s.Text(3);
    r.campaign_id = s.Int(4);
    r.ad_id = s.Int(5);
    r.arm = s.Text(6);
    r.served_at = s.Int(7);
    r.clicked_at = s.Int(8);
    r.price = s.Int(9);
    r.person = static_cast<uint64_t>(s.Int(10));
    r.earlier_variant = s.Int(11) != 0;
    int64_t status = s.Int(12);
    if (status < 0 || status > static_cast<int64_t>(ClickStatus::kInvalid)) {
      return InternalError("click_outbox row " + std::to_string(r.id) + ": bad status");
    }
    r.status = static_cast<ClickStatus>(status);
    r.reason = s.Text(13);
    r.ip = s.Text(14);
    out.push_back(std::move(r));
  }
}

Status SqliteEventOutbox::Remove(Id through) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s, conn_->Prepare("DELETE FROM click_outbox WHERE id <= ?1"));
  return s.Bind(1, through).Run();
}

Result<int64_t> SqliteEventOutbox::Count() {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s, conn_->Prepare("SELECT count(*) FROM click_outbox"));
  ADS_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

Status SqliteEventOutbox::AppendEvent(AdvertiserEventRecord& e) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("INSERT INTO advertiser_event_outbox (community_id, key_id, name, url, "
                     "decision_id, person, created_at, invalid_reason) VALUES (?1, ?2, ?3, ?4, "
                     "?5, ?6, ?7, ?8) RETURNING id"));
  s.Bind(1, e.community_id).Bind(2, e.key_id).Bind(3, e.name);
  if (e.url) {
    s.Bind(4, *e.url);
  } else {
    s.BindNull(4);
  }
  if (e.decision_id) {
    s.BindBlob(5, e.decision_id->data(), e.decision_id->size());
  } else {
    s.BindNull(5);
  }
  s.Bind(6, static_cast<int64_t>(e.person)).Bind(7, e.created_at).Bind(8, e.invalid_reason);
  ADS_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return InternalError("advertiser_event_outbox insert returned no id");
  e.id = s.Int(0);
  return OkStatus();
}

Result<std::vector<AdvertiserEventRecord>> SqliteEventOutbox::OldestEvents(size_t limit) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("SELECT id, community_id, key_id, name, url, decision_id, person, created_at, "
                     "invalid_reason FROM advertiser_event_outbox ORDER BY id LIMIT ?1"));
  s.Bind(1, static_cast<int64_t>(limit));
  std::vector<AdvertiserEventRecord> out;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    AdvertiserEventRecord e;
    e.id = s.Int(0);
    e.community_id = s.Int(1);
    e.key_id = s.Int(2);
    e.name = s.Text(3);
    if (!s.IsNull(4)) e.url = s.Text(4);
    if (!s.IsNull(5)) {
      std::array<uint8_t, 16> id{};
      if (!s.Blob(5, id.data(), id.size())) {
        return InternalError("advertiser_event_outbox row " + std::to_string(e.id) +
                             ": bad decision id");
      }
      e.decision_id = id;
    }
    e.person = static_cast<uint64_t>(s.Int(6));
    e.created_at = s.Int(7);
    e.invalid_reason = s.Text(8);
    out.push_back(std::move(e));
  }
}

Status SqliteEventOutbox::RemoveEvent(Id id) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s,
                       conn_->Prepare("DELETE FROM advertiser_event_outbox WHERE id = ?1"));
  return s.Bind(1, id).Run();
}

Result<int64_t> SqliteEventOutbox::EventCount() {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(Statement s,
                       conn_->Prepare("SELECT count(*) FROM advertiser_event_outbox"));
  ADS_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

}  // namespace adserver::store
