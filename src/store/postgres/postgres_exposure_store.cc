#include "store/postgres/postgres_exposure_store.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "common/json_writer.h"
#include "store/postgres/detail/pg_connection.h"
#include "store/postgres/detail/pg_migrations.h"

namespace adserver::store {
namespace {

using pg_detail::Param;
using pg_detail::PgConnection;
using pg_detail::PgParam;
using pg_detail::PgResult;
using pg_detail::PgTransaction;

// Rows per upsert statement (one transaction however many statements).
constexpr size_t kRowsPerStatement = 2'000;

// An entry's time, for ordering inside SQL.
constexpr std::string_view kAt = "(e->>'t')::bigint";

// Upserts the rows of a jsonb array ($1: [{"w","c","p","t","e":[entries newest first]}]),
// merging a conflicting row's entries with the new ones: one entry per decision id, the
// newest kMaxExposuresPerRecord kept, newest first. prior_last_seen stays the creating write's.
std::string UpsertSql() {
  const std::string at(kAt), keep = std::to_string(kMaxExposuresPerRecord);
  return "INSERT INTO exposures AS x (wallet, campaign_id, prior_last_seen, newest, entries) "
         "SELECT decode(r->>'w', 'hex'), (r->>'c')::bigint, (r->>'p')::bigint, "
         "(r->>'t')::bigint, r->'e' FROM jsonb_array_elements($1::jsonb) AS r "
         "ON CONFLICT (wallet, campaign_id) DO UPDATE SET "
         "newest = greatest(x.newest, EXCLUDED.newest), "
         "entries = (SELECT jsonb_agg(e ORDER BY " + at + " DESC, e->>'d' DESC) FROM ("
         "SELECT e FROM (SELECT DISTINCT ON (e->>'d') e FROM "
         "jsonb_array_elements(x.entries || EXCLUDED.entries) AS a (e) "
         "ORDER BY e->>'d', " + at + " DESC) AS u "
         "ORDER BY " + at + " DESC, e->>'d' DESC LIMIT " + keep + ") AS k)";
}

// Entries of one row, newest first, as columns.
constexpr std::string_view kGetSql =
    "SELECT x.prior_last_seen, e->>'d', (e->>'t')::bigint, (e->>'a')::bigint, "
    "(e->>'p')::bigint, e->>'n', e->>'r', e->>'u' FROM exposures x "
    "CROSS JOIN LATERAL jsonb_array_elements(x.entries) AS a (e) "
    "WHERE x.wallet = $1 AND x.campaign_id = $2 "
    "ORDER BY (e->>'t')::bigint DESC, e->>'d' DESC";

// One expiry step over the keys after ($1 wallet, $2 campaign), at most $3 of them, cutoff $4:
// rows whose newest entry is older are deleted, others lose their older entries. Answers the
// rows visited, the rows deleted and the last key visited.
constexpr std::string_view kExpireSql =
    "WITH batch AS (SELECT wallet, campaign_id, newest, entries FROM exposures "
    "WHERE (wallet, campaign_id) > ($1::bytea, $2::bigint) ORDER BY wallet, campaign_id LIMIT $3 FOR UPDATE), "
    "gone AS (DELETE FROM exposures x USING batch b WHERE x.wallet = b.wallet AND "
    "x.campaign_id = b.campaign_id AND b.newest < $4 RETURNING 1), "
    "trimmed AS (UPDATE exposures x SET entries = (SELECT jsonb_agg(e ORDER BY "
    "(e->>'t')::bigint DESC, e->>'d' DESC) FROM jsonb_array_elements(b.entries) AS a (e) "
    "WHERE (e->>'t')::bigint >= $4) FROM batch b WHERE x.wallet = b.wallet AND "
    "x.campaign_id = b.campaign_id AND b.newest >= $4 AND EXISTS (SELECT 1 FROM "
    "jsonb_array_elements(b.entries) AS a (e) WHERE (e->>'t')::bigint < $4) RETURNING 1) "
    "SELECT (SELECT count(*) FROM batch), (SELECT count(*) FROM gone), "
    "(SELECT count(*) FROM trimmed), (SELECT encode(wallet, 'hex') || ':' || campaign_id "
    "FROM batch ORDER BY wallet DESC, campaign_id DESC LIMIT 1)";

// Claims the cluster's sweep: succeeds (one row) when no sweep started for $1 seconds.
constexpr std::string_view kClaimSweepSql =
    "UPDATE exposure_sweeps SET started_at = extract(epoch FROM now())::bigint "
    "WHERE id = 1 AND started_at <= extract(epoch FROM now())::bigint - $1 RETURNING 1";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes `hex` into `out` (at most `limit` bytes); false if it is not hex.
bool HexDecodeInto(std::string_view hex, uint8_t* out, size_t size) {
  if (hex.size() != 2 * size) return false;
  for (size_t i = 0; i < size; ++i) {
    int hi = HexValue(hex[2 * i]), lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

Result<std::string> HexText(std::string_view hex) {
  std::string out(hex.size() / 2, '\0');
  if (!HexDecodeInto(hex, reinterpret_cast<uint8_t*>(out.data()), out.size())) {
    return InternalError("exposures.entries holds a string that is not hex");
  }
  return out;
}

std::string HexOf(std::string_view s, size_t limit) {
  s = s.substr(0, limit);
  return HexEncode(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// The writes of one row, merged as the upsert merges them with the row's entries.
struct Row {
  int64_t prior_last_seen = 0;
  std::vector<const ExposureEntry*> entries;
};

void AppendEntry(std::string& out, const ExposureEntry& e) {
  JsonObjectWriter o(out);
  o.String("d", HexEncode(e.decision_id.data(), e.decision_id.size()))
      .Int("t", e.exposed_at)
      .Int("a", e.ad_id)
      .Int("p", e.publisher_id)
      .String("n", std::to_string(e.person))
      .String("r", HexOf(e.arm, kMaxExposureArmBytes))
      .String("u", HexOf(e.ad_unit_id, kMaxExposureAdUnitBytes));
  o.Close();
}

// The jsonb parameter of rows [begin, end).
template <class It>
std::string RowsJson(It begin, It end) {
  std::string out = "[";
  for (It it = begin; it != end; ++it) {
    const auto& [key, row] = *it;
    if (out.size() > 1) out += ',';
    JsonObjectWriter o(out);
    o.String("w", HexEncode(std::get<0>(key).bytes.data(), std::get<0>(key).bytes.size()))
        .Int("c", std::get<1>(key))
        .Int("p", row.prior_last_seen)
        .Int("t", row.entries.front()->exposed_at);
    std::string entries = "[";
    for (const ExposureEntry* e : row.entries) {
      if (entries.size() > 1) entries += ',';
      AppendEntry(entries, *e);
    }
    entries += ']';
    o.Raw("e", entries);
    o.Close();
  }
  out += ']';
  return out;
}

Result<int64_t> ParseInt(std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return InternalError("not an integer: " + std::string(text));
  }
  return v;
}

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
  // One row per key (an upsert statement may not change a row twice), merged as the SQL does.
  std::map<std::tuple<Address, Id>, Row> rows;
  for (const ExposureWrite& w : writes) {
    auto [it, created] = rows.try_emplace({w.wallet, w.campaign_id});
    if (created) it->second.prior_last_seen = w.prior_last_seen;
    std::vector<const ExposureEntry*>& entries = it->second.entries;
    if (std::any_of(entries.begin(), entries.end(), [&](const ExposureEntry* e) {
          return e->decision_id == w.entry.decision_id;
        })) {
      continue;
    }
    entries.push_back(&w.entry);
  }
  for (auto& [key, row] : rows) {
    std::stable_sort(row.entries.begin(), row.entries.end(),
                     [](const ExposureEntry* a, const ExposureEntry* b) {
                       return a->exposed_at > b->exposed_at;
                     });
    if (row.entries.size() > kMaxExposuresPerRecord) row.entries.resize(kMaxExposuresPerRecord);
  }
  static const std::string kUpsert = UpsertSql();
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
  auto it = rows.begin();
  while (it != rows.end()) {
    auto end = it;
    for (size_t n = 0; n < kRowsPerStatement && end != rows.end(); ++n) ++end;
    ADS_RETURN_IF_ERROR(conn_->Exec(kUpsert, {RowsJson(it, end)}).status());
    it = end;
  }
  return txn.Commit();
}

Result<std::optional<ExposureRecord>> PostgresExposureStore::Get(const Address& wallet,
                                                                  Id campaign_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      PgResult r, conn_->Exec(kGetSql, {pg_detail::BytesParam(wallet.bytes.data(),
                                                               wallet.bytes.size()),
                                        Param(campaign_id)}));
  if (r.rows() == 0) return std::optional<ExposureRecord>();
  ExposureRecord record;
  ADS_ASSIGN_OR_RETURN(record.prior_last_seen, r.Int(0, 0));
  for (int i = 0; i < r.rows(); ++i) {
    ExposureEntry& e = record.entries.emplace_back();
    if (!HexDecodeInto(r.Text(i, 1), e.decision_id.data(), e.decision_id.size())) {
      return InternalError("exposures.entries holds a decision id that is not 16 hex bytes");
    }
    ADS_ASSIGN_OR_RETURN(e.exposed_at, r.Int(i, 2));
    ADS_ASSIGN_OR_RETURN(e.ad_id, r.Int(i, 3));
    ADS_ASSIGN_OR_RETURN(e.publisher_id, r.Int(i, 4));
    std::string_view person = r.Text(i, 5);
    auto [end, ec] = std::from_chars(person.data(), person.data() + person.size(), e.person);
    if (ec != std::errc() || end != person.data() + person.size()) {
      return InternalError("exposures.entries holds a person that is not a number");
    }
    ADS_ASSIGN_OR_RETURN(e.arm, HexText(r.Text(i, 6)));
    ADS_ASSIGN_OR_RETURN(e.ad_unit_id, HexText(r.Text(i, 7)));
  }
  return std::optional<ExposureRecord>(std::move(record));
}

Result<ExpiryStep> PostgresExposureStore::ExpireStep(int64_t cutoff, std::string_view after,
                                                     size_t max_records) {
  std::string wallet = "\\x";
  int64_t campaign = 0;
  if (!after.empty()) {
    size_t colon = after.find(':');
    if (colon == std::string_view::npos) return InvalidArgumentError("not an exposure expiry key");
    Result<int64_t> id = ParseInt(after.substr(colon + 1));
    if (!id.ok()) return InvalidArgumentError("not an exposure expiry key");
    wallet += std::string(after.substr(0, colon));
    campaign = *id;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (after.empty()) {
    ADS_ASSIGN_OR_RETURN(PgResult claimed,
                         conn_->Exec(kClaimSweepSql, {Param(options_.min_sweep_interval_seconds)}));
    if (claimed.rows() == 0) return ExpiryStep{.deleted = 0, .done = true, .resume = {}};
  }
  ADS_ASSIGN_OR_RETURN(PgResult r, conn_->Exec(kExpireSql,
                                               {wallet, Param(campaign),
                                                Param(static_cast<int64_t>(max_records)),
                                                Param(cutoff)}));
  ADS_ASSIGN_OR_RETURN(int64_t visited, r.Int(0, 0));
  ExpiryStep step;
  ADS_ASSIGN_OR_RETURN(step.deleted, r.Int(0, 1));
  step.done = visited < static_cast<int64_t>(max_records);
  if (!step.done) step.resume = std::string(r.Text(0, 3));
  return step;
}

Result<ExposureStats> PostgresExposureStore::Stats() {
  std::lock_guard<std::mutex> lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      PgResult r, conn_->Exec("SELECT count(*), pg_total_relation_size('exposures') FROM exposures"));
  ExposureStats stats;
  ADS_ASSIGN_OR_RETURN(stats.records, r.Int(0, 0));
  ADS_ASSIGN_OR_RETURN(stats.bytes, r.Int(0, 1));
  return stats;
}

}  // namespace adserver::store
