#include "store/postgres/postgres_exposure_store.h"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "store/postgres/detail/pg_connection.h"
#include "store/postgres/detail/pg_migrations.h"

namespace adserver::store {
namespace {

using pg_detail::Param;
using pg_detail::PgConnection;
using pg_detail::PgParam;
using pg_detail::PgResult;
using pg_detail::PgTransaction;

// Rows per insert statement (one transaction however many statements).
constexpr size_t kExposureRowsPerStatement = 5'000;

// Appends rows given as arrays ($1..$10); a row already there (the same decision) is skipped.
constexpr std::string_view kInsertSql =
    "INSERT INTO exposures (wallet, campaign_id, exposed_at, decision_id, ad_id, publisher_id, "
    "person, arm, ad_unit_id, prior_last_seen) SELECT decode(w, 'hex'), c, t, decode(d, 'hex'), "
    "a, p, n, decode(r, 'hex'), decode(u, 'hex'), l FROM unnest($1::text[], $2::bigint[], "
    "$3::bigint[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], $8::text[], "
    "$9::text[], $10::bigint[]) AS v (w, c, t, d, a, p, n, r, u, l) ON CONFLICT DO NOTHING";

// The newest kMaxExposuresPerRecord entries of one pair (a backward scan of the primary key).
const std::string kGetSql =
    "SELECT decision_id, exposed_at, ad_id, publisher_id, person, arm, ad_unit_id "
    "FROM exposures WHERE wallet = $1 AND "
    "campaign_id = $2 ORDER BY exposed_at DESC, decision_id DESC LIMIT " +
    std::to_string(kMaxExposuresPerRecord);
// The pair's first exposure still kept fixed its prior interaction.
constexpr std::string_view kPriorSql =
    "SELECT prior_last_seen FROM exposures WHERE wallet = $1 AND campaign_id = $2 "
    "ORDER BY exposed_at, decision_id LIMIT 1";

// One expiry step over the rows after the key ($1 wallet, $2 campaign, $3 time, $4 decision),
// at most $5 of them, cutoff $6: deletes the rows exposed before the cutoff. Answers the rows
// visited, the pairs left without rows and the last key visited.
constexpr std::string_view kExpireSql =
    "WITH batch AS (SELECT wallet, campaign_id, exposed_at, decision_id FROM exposures "
    "WHERE (wallet, campaign_id, exposed_at, decision_id) > ($1::bytea, $2::bigint, $3::bigint, "
    "$4::bytea) ORDER BY wallet, campaign_id, exposed_at, decision_id LIMIT $5), "
    "gone AS (DELETE FROM exposures x USING batch b WHERE x.wallet = b.wallet AND "
    "x.campaign_id = b.campaign_id AND x.exposed_at = b.exposed_at AND "
    "x.decision_id = b.decision_id AND b.exposed_at < $6 RETURNING x.wallet, x.campaign_id) "
    "SELECT (SELECT count(*) FROM batch), (SELECT count(*) FROM (SELECT DISTINCT wallet, "
    "campaign_id FROM gone) g WHERE NOT EXISTS (SELECT 1 FROM exposures e WHERE "
    "e.wallet = g.wallet AND e.campaign_id = g.campaign_id AND e.exposed_at >= $6)), "
    "(SELECT encode(wallet, 'hex') || ':' || campaign_id || ':' || exposed_at || ':' || "
    "encode(decision_id, 'hex') FROM batch ORDER BY wallet DESC, campaign_id DESC, "
    "exposed_at DESC, decision_id DESC LIMIT 1)";

// Claims the cluster's sweep: succeeds (one row) when no sweep started for $1 seconds.
constexpr std::string_view kClaimSweepSql =
    "UPDATE exposure_sweeps SET started_at = extract(epoch FROM now())::bigint "
    "WHERE id = 1 AND started_at <= extract(epoch FROM now())::bigint - $1 RETURNING 1";

// A bytea column as text (arm, adUnitId: whatever bytes the request carried).
Result<std::string> BytesText(const PgResult& r, int row, int column) {
  ADS_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, r.Bytes(row, column));
  return std::string(bytes.begin(), bytes.end());
}

std::string HexOf(std::string_view s, size_t limit) {
  s = s.substr(0, limit);
  return HexEncode(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

Result<int64_t> ParseInt(std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgumentError("not an integer: " + std::string(text));
  }
  return v;
}

// Postgres array literals of the insert's columns: hex strings (no quoting needed), integers.
class ExposureArrayParams {
 public:
  static constexpr size_t kColumns = 10;
  void Add(const ExposureWrite& w) {
    const ExposureEntry& e = w.entry;
    Append(0, HexEncode(w.wallet.bytes.data(), w.wallet.bytes.size()));
    Append(1, std::to_string(w.campaign_id));
    Append(2, std::to_string(e.exposed_at));
    Append(3, HexEncode(e.decision_id.data(), e.decision_id.size()));
    Append(4, std::to_string(e.ad_id));
    Append(5, std::to_string(e.publisher_id));
    Append(6, std::to_string(static_cast<int64_t>(e.person)));  // the bits of the uint64
    Append(7, QuotedHex(HexOf(e.arm, kMaxExposureArmBytes)));
    Append(8, QuotedHex(HexOf(e.ad_unit_id, kMaxExposureAdUnitBytes)));
    Append(9, std::to_string(w.prior_last_seen));
  }
  std::vector<PgParam> Params() const {
    std::vector<PgParam> out;
    for (const std::string& list : lists_) out.push_back(list.empty() ? "{}" : list + "}");
    return out;
  }

 private:
  // An empty string must be quoted in an array literal ({""}); hex needs no escaping.
  static std::string QuotedHex(std::string hex) { return "\"" + hex + "\""; }
  void Append(size_t column, const std::string& item) {
    std::string& list = lists_[column];
    list += list.empty() ? "{" : ",";
    list += item;
  }
  std::string lists_[kColumns];
};

}  // namespace

PostgresExposureStore::PostgresExposureStore(std::unique_ptr<PgConnection> conn,
                                             const PostgresExposureOptions& options)
    : conn_(std::move(conn)), options_(options) {}

PostgresExposureStore::~PostgresExposureStore() = default;

Result<std::unique_ptr<PostgresExposureStore>> PostgresExposureStore::Open(
    const std::string& url, const PostgresExposureOptions& options) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Open(url));
  ADS_RETURN_IF_ERROR(pg_detail::ApplyMigrations(*conn).status());
  return std::unique_ptr<PostgresExposureStore>(
      new PostgresExposureStore(std::move(conn), options));
}

Status PostgresExposureStore::AddExposures(std::span<const ExposureWrite> writes) {
  if (writes.empty()) return OkStatus();
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
  for (size_t begin = 0; begin < writes.size(); begin += kExposureRowsPerStatement) {
    ExposureArrayParams params;
    const size_t end = std::min(writes.size(), begin + kExposureRowsPerStatement);
    for (size_t i = begin; i < end; ++i) params.Add(writes[i]);
    ADS_RETURN_IF_ERROR(conn_->Exec(kInsertSql, params.Params()).status());
  }
  return txn.Commit();
}

Result<std::optional<ExposureRecord>> PostgresExposureStore::Get(const Address& wallet,
                                                                  Id campaign_id) {
  const std::vector<PgParam> key = {
      pg_detail::BytesParam(wallet.bytes.data(), wallet.bytes.size()), Param(campaign_id)};
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(
                                              *conn_, "BEGIN ISOLATION LEVEL REPEATABLE READ"));
  ADS_ASSIGN_OR_RETURN(PgResult r, conn_->Exec(kGetSql, key));
  if (r.rows() == 0) return std::optional<ExposureRecord>();
  ExposureRecord record;
  for (int i = 0; i < r.rows(); ++i) {
    ExposureEntry& e = record.entries.emplace_back();
    ADS_ASSIGN_OR_RETURN(std::vector<uint8_t> decision, r.Bytes(i, 0));
    if (decision.size() != e.decision_id.size()) {
      return InternalError("exposures.decision_id is not 16 bytes");
    }
    std::copy(decision.begin(), decision.end(), e.decision_id.begin());
    ADS_ASSIGN_OR_RETURN(e.exposed_at, r.Int(i, 1));
    ADS_ASSIGN_OR_RETURN(e.ad_id, r.Int(i, 2));
    ADS_ASSIGN_OR_RETURN(e.publisher_id, r.Int(i, 3));
    ADS_ASSIGN_OR_RETURN(int64_t person, r.Int(i, 4));
    e.person = static_cast<uint64_t>(person);
    ADS_ASSIGN_OR_RETURN(e.arm, BytesText(r, i, 5));
    ADS_ASSIGN_OR_RETURN(e.ad_unit_id, BytesText(r, i, 6));
  }
  ADS_ASSIGN_OR_RETURN(PgResult prior, conn_->Exec(kPriorSql, key));
  if (prior.rows() > 0) {
    ADS_ASSIGN_OR_RETURN(record.prior_last_seen, prior.Int(0, 0));
  }
  ADS_RETURN_IF_ERROR(txn.Commit());
  return std::optional<ExposureRecord>(std::move(record));
}

Result<ExpiryStep> PostgresExposureStore::ExpireStep(int64_t cutoff, std::string_view after,
                                                     size_t max_records) {
  // The key after which to continue: wallet:campaign:time:decision (hex, decimal, decimal, hex).
  std::string wallet = "\\x", decision = "\\x";
  int64_t campaign = 0, at = 0;
  if (!after.empty()) {
    std::vector<std::string_view> parts;
    for (size_t start = 0;;) {
      size_t colon = after.find(':', start);
      parts.push_back(after.substr(start, colon - start));
      if (colon == std::string_view::npos) break;
      start = colon + 1;
    }
    if (parts.size() != 4) return InvalidArgumentError("not an exposure expiry key");
    ADS_ASSIGN_OR_RETURN(campaign, ParseInt(parts[1]));
    ADS_ASSIGN_OR_RETURN(at, ParseInt(parts[2]));
    wallet += std::string(parts[0]);
    decision += std::string(parts[3]);
  } else {
    campaign = INT64_MIN, at = INT64_MIN;
  }
  MutexLock lock(mu_);
  if (after.empty()) {
    ADS_ASSIGN_OR_RETURN(PgResult claimed,
                         conn_->Exec(kClaimSweepSql, {Param(options_.min_sweep_interval_seconds)}));
    if (claimed.rows() == 0) return ExpiryStep{.deleted = 0, .done = true, .resume = {}};
  }
  ADS_ASSIGN_OR_RETURN(
      PgResult r, conn_->Exec(kExpireSql, {wallet, Param(campaign), Param(at), decision,
                                           Param(static_cast<int64_t>(max_records)), Param(cutoff)}));
  ADS_ASSIGN_OR_RETURN(int64_t visited, r.Int(0, 0));
  ExpiryStep step;
  ADS_ASSIGN_OR_RETURN(step.deleted, r.Int(0, 1));
  step.done = visited < static_cast<int64_t>(max_records);
  if (!step.done) step.resume = std::string(r.Text(0, 2));
  return step;
}

Result<ExposureStats> PostgresExposureStore::Stats() {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgResult r,
                       conn_->Exec("SELECT (SELECT count(*) FROM (SELECT DISTINCT wallet, "
                                   "campaign_id FROM exposures) p), "
                                   "pg_total_relation_size('exposures')"));
  ExposureStats stats;
  ADS_ASSIGN_OR_RETURN(stats.records, r.Int(0, 0));
  ADS_ASSIGN_OR_RETURN(stats.bytes, r.Int(0, 1));
  return stats;
}

}  // namespace adserver::store
