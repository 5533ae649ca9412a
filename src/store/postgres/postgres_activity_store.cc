#include "store/postgres/postgres_activity_store.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>

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

// pg_advisory_xact_lock key of activity writers ("adsrvact"; migration 6's triggers take it).
constexpr int64_t kLock = 0x6164737276'616374;

// Rows per statement of a write (one transaction however many statements).
constexpr size_t kRowsPerStatement = 5'000;

constexpr std::string_view kColumns = "wallet, project_id, chain_id, last_seen, count";

// The log position: the newest seq committed, or what a prune or TRUNCATE skipped past.
constexpr std::string_view kPositionSql =
    "SELECT greatest(coalesce((SELECT max(seq) FROM activity_changes), 0), "
    "(SELECT pruned_through FROM activity_log))";

// Upserts text arrays of hex wallets and bigint columns ($1..$5); `set` is the DO UPDATE.
std::string UpsertSql(std::string_view set) {
  return "INSERT INTO wallet_activity (wallet, project_id, chain_id, last_seen, count) "
         "SELECT decode(w, 'hex'), p, c, l, n FROM unnest($1::text[], $2::bigint[], "
         "$3::bigint[], $4::bigint[], $5::bigint[]) AS t (w, p, c, l, n) "
         "ON CONFLICT (wallet, project_id, chain_id) DO UPDATE SET " +
         std::string(set);
}

const std::string kAddSql = UpsertSql(
    "last_seen = greatest(wallet_activity.last_seen, EXCLUDED.last_seen), "
    "count = wallet_activity.count + EXCLUDED.count");
// Unchanged rows are not rewritten: re-applying a value logs nothing.
const std::string kPutSql = UpsertSql(
    "last_seen = EXCLUDED.last_seen, count = EXCLUDED.count "
    "WHERE (wallet_activity.last_seen, wallet_activity.count) IS DISTINCT FROM "
    "(EXCLUDED.last_seen, EXCLUDED.count)");
constexpr std::string_view kDeleteSql =
    "DELETE FROM wallet_activity a USING unnest($1::text[], $2::bigint[], $3::bigint[]) "
    "AS t (w, p, c) WHERE a.wallet = decode(t.w, 'hex') AND a.project_id = t.p AND "
    "a.chain_id = t.c";

using Key = std::tuple<Address, Id, int64_t>;
Key KeyOf(const ActivityRecord& r) { return {r.wallet, r.project_id, r.chain_id}; }

Status ValidateIds(const ActivityRecord& r) {
  if (r.project_id <= 0 || r.chain_id <= 0) {
    return InvalidArgumentError("activity rows need positive project and chain ids");
  }
  return OkStatus();
}

// Postgres array literals of rows [begin, end): hex wallets (no quoting needed) and integers.
class ArrayParams {
 public:
  void Add(const ActivityRecord& r) {
    Append(wallets_, HexEncode(r.wallet.bytes.data(), r.wallet.bytes.size()));
    Append(projects_, std::to_string(r.project_id));
    Append(chains_, std::to_string(r.chain_id));
    Append(last_seen_, std::to_string(r.last_seen));
    Append(counts_, std::to_string(r.count));
  }
  std::vector<PgParam> Keys() const { return {Close(wallets_), Close(projects_), Close(chains_)}; }
  std::vector<PgParam> All() const {
    return {Close(wallets_), Close(projects_), Close(chains_), Close(last_seen_), Close(counts_)};
  }

 private:
  static void Append(std::string& list, const std::string& item) {
    list += list.empty() ? "{" : ",";
    list += item;
  }
  static PgParam Close(const std::string& list) { return list.empty() ? "{}" : list + "}"; }
  std::string wallets_, projects_, chains_, last_seen_, counts_;
};

// Runs `sql` over `rows` in statements of kRowsPerStatement; `keys_only` binds $1..$3.
Status RunBatches(PgConnection& c, std::string_view sql, const std::vector<ActivityRecord>& rows,
                  bool keys_only) {
  for (size_t begin = 0; begin < rows.size(); begin += kRowsPerStatement) {
    ArrayParams params;
    size_t end = std::min(rows.size(), begin + kRowsPerStatement);
    for (size_t i = begin; i < end; ++i) params.Add(rows[i]);
    ADS_RETURN_IF_ERROR(c.Exec(sql, keys_only ? params.Keys() : params.All()).status());
  }
  return OkStatus();
}

Status NameMissingProject(Status st) {
  if (st.code() != Code::kConflict) return st;
  return ConflictError("activity of a project that does not exist (" + st.message() + ")");
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// A bytea column in hex output form holding a wallet.
Result<Address> WalletAt(const PgResult& r, int row, int column) {
  std::string_view text = r.Text(row, column);
  Address a;
  if (text.size() != 2 + 2 * a.bytes.size() || !text.starts_with("\\x")) {
    return InternalError("wallet_activity.wallet is not 20 bytes");
  }
  for (size_t i = 0; i < a.bytes.size(); ++i) {
    int hi = HexValue(text[2 + 2 * i]), lo = HexValue(text[3 + 2 * i]);
    if (hi < 0 || lo < 0) return InternalError("wallet_activity.wallet is not hex");
    a.bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return a;
}

// Columns `first`.. of kColumns into `out`; last_seen and count NULL (removed) read as 0.
Status ReadRecord(const PgResult& r, int row, int first, ActivityRecord& out) {
  ADS_ASSIGN_OR_RETURN(out.wallet, WalletAt(r, row, first));
  ADS_ASSIGN_OR_RETURN(out.project_id, r.Int(row, first + 1));
  ADS_ASSIGN_OR_RETURN(out.chain_id, r.Int(row, first + 2));
  out.last_seen = 0, out.count = 0;
  if (r.IsNull(row, first + 3)) return OkStatus();
  ADS_ASSIGN_OR_RETURN(out.last_seen, r.Int(row, first + 3));
  ADS_ASSIGN_OR_RETURN(out.count, r.Int(row, first + 4));
  return OkStatus();
}

Result<int64_t> Position(PgConnection& c) {
  ADS_ASSIGN_OR_RETURN(PgResult r, c.Exec(kPositionSql));
  return r.Int(0, 0);
}

}  // namespace

// ---- PgActivitySnapshot

PgActivitySnapshot::PgActivitySnapshot(std::unique_ptr<PgConnection> conn, size_t batch)
    : conn_(std::move(conn)), batch_(std::max<size_t>(batch, 1)) {}

PgActivitySnapshot::~PgActivitySnapshot() = default;

Status PgActivitySnapshot::Begin() {
  ADS_ASSIGN_OR_RETURN(
      PgTransaction txn,
      PgTransaction::Begin(*conn_, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
  txn_ = std::make_unique<PgTransaction>(std::move(txn));
  // The first statement fixes the snapshot: the position and the cursor's rows share it.
  ADS_ASSIGN_OR_RETURN(position_, Position(*conn_));
  return conn_->ExecScript("DECLARE activity_snapshot NO SCROLL CURSOR FOR SELECT " +
                           std::string(kColumns) +
                           " FROM wallet_activity ORDER BY wallet, project_id, chain_id");
}

Status PgActivitySnapshot::Next(std::vector<ActivityRecord>& rows) {
  rows.clear();
  if (done_) return OkStatus();
  ADS_ASSIGN_OR_RETURN(PgResult r,
                       conn_->Exec("FETCH " + std::to_string(batch_) + " FROM activity_snapshot"));
  rows.resize(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) ADS_RETURN_IF_ERROR(ReadRecord(r, i, 0, rows[i]));
  if (rows.size() < batch_) {
    done_ = true;
    txn_.reset();  // read only: the rollback ends it
  }
  return OkStatus();
}

// ---- PostgresActivityStore

PostgresActivityStore::PostgresActivityStore(std::unique_ptr<PgConnection> conn, std::string url)
    : url_(std::move(url)), conn_(std::move(conn)) {}

PostgresActivityStore::~PostgresActivityStore() = default;

Result<std::unique_ptr<PostgresActivityStore>> PostgresActivityStore::Open(const std::string& url) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Open(url));
  ADS_RETURN_IF_ERROR(pg_detail::ApplyMigrations(*conn).status());
  return std::unique_ptr<PostgresActivityStore>(new PostgresActivityStore(std::move(conn), url));
}

Status PostgresActivityStore::RecordActivity(const std::vector<ActivityRecord>& rows) {
  if (rows.empty()) return OkStatus();
  // One row per key: an upsert statement may not change a row twice.
  std::map<Key, ActivityRecord> merged;
  for (const ActivityRecord& r : rows) {
    ADS_RETURN_IF_ERROR(ValidateIds(r));
    auto [it, inserted] = merged.try_emplace(KeyOf(r), r);
    if (inserted) continue;
    it->second.last_seen = std::max(it->second.last_seen, r.last_seen);
    it->second.count += r.count;
  }
  std::vector<ActivityRecord> batch;
  batch.reserve(merged.size());
  for (auto& [key, r] : merged) batch.push_back(r);
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
  ADS_RETURN_IF_ERROR(NameMissingProject(RunBatches(*conn_, kAddSql, batch, false)));
  return txn.Commit();
}

Status PostgresActivityStore::PutActivityValues(const std::vector<ActivityValue>& values) {
  if (values.empty()) return OkStatus();
  std::map<Key, const ActivityValue*> last;
  for (const ActivityValue& v : values) {
    ADS_RETURN_IF_ERROR(ValidateIds(v.row));
    last[KeyOf(v.row)] = &v;
  }
  std::vector<ActivityRecord> present, removed;
  for (const auto& [key, v] : last) (v->removed ? removed : present).push_back(v->row);
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
  ADS_RETURN_IF_ERROR(RunBatches(*conn_, kDeleteSql, removed, true));
  ADS_RETURN_IF_ERROR(NameMissingProject(RunBatches(*conn_, kPutSql, present, false)));
  return txn.Commit();
}

Result<std::vector<ActivityRecord>> PostgresActivityStore::ActivityForWallet(
    const Address& wallet) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(
      PgResult r,
      conn_->Exec("SELECT " + std::string(kColumns) +
                      " FROM wallet_activity WHERE wallet = $1 ORDER BY project_id, chain_id",
                  {pg_detail::BytesParam(wallet.bytes.data(), wallet.bytes.size())}));
  std::vector<ActivityRecord> out(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) ADS_RETURN_IF_ERROR(ReadRecord(r, i, 0, out[i]));
  return out;
}

Status PostgresActivityStore::ScanActivity(const std::function<void(const ActivityRecord&)>& fn) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<PgActivitySnapshot> snapshot, OpenSnapshot());
  std::vector<ActivityRecord> rows;
  do {
    ADS_RETURN_IF_ERROR(snapshot->Next(rows));
    for (const ActivityRecord& r : rows) fn(r);
  } while (!rows.empty());
  return OkStatus();
}

Result<uint64_t> PostgresActivityStore::ActivityChangeCounter() {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(int64_t position, Position(*conn_));
  return static_cast<uint64_t>(position);
}

Result<ActivityChanges> PostgresActivityStore::ChangesAfter(int64_t after, size_t limit) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgResult r, conn_->Exec("SELECT seq, " + std::string(kColumns) +
                                                   " FROM activity_changes WHERE seq > $1 "
                                                   "ORDER BY seq LIMIT $2",
                                               {Param(after), Param(static_cast<int64_t>(limit))}));
  // Read after the entries: pruning only moves forward, so if nothing past `after` is pruned
  // now, nothing was when the entries were read.
  ADS_ASSIGN_OR_RETURN(PgResult pruned, conn_->Exec("SELECT pruned_through FROM activity_log"));
  ADS_ASSIGN_OR_RETURN(int64_t pruned_through, pruned.Int(0, 0));
  if (pruned_through > after) {
    return NotFoundError("the activity change log is pruned past seq " + std::to_string(after) +
                         " (through " + std::to_string(pruned_through) + ")");
  }
  ActivityChanges out{.changes = std::vector<ActivityChange>(static_cast<size_t>(r.rows())),
                      .position = after};
  for (int i = 0; i < r.rows(); ++i) {
    ActivityChange& change = out.changes[i];
    ADS_ASSIGN_OR_RETURN(change.seq, r.Int(i, 0));
    ADS_RETURN_IF_ERROR(ReadRecord(r, i, 1, change.value.row));
    change.value.removed = r.IsNull(i, 5);
    out.position = change.seq;
  }
  return out;
}

Result<std::unique_ptr<PgActivitySnapshot>> PostgresActivityStore::OpenSnapshot(size_t batch) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Open(url_));
  auto snapshot = std::unique_ptr<PgActivitySnapshot>(new PgActivitySnapshot(std::move(conn), batch));
  ADS_RETURN_IF_ERROR(snapshot->Begin());
  return snapshot;
}

// ---- ChainLedger

namespace {

std::string BlockName(int64_t chain_id, uint64_t block) {
  return "block " + std::to_string(block) + " of chain " + std::to_string(chain_id);
}

PgParam BlockParam(uint64_t number) { return Param(static_cast<int64_t>(number)); }

// A statement whose rows are not needed.
Status Run(PgConnection& c, std::string_view sql, const std::vector<PgParam>& params) {
  return c.Exec(sql, params).status();
}

Status ValidateBlocks(int64_t chain_id, std::span<const IndexedBlock> blocks) {
  if (chain_id <= 0) return InvalidArgumentError("chain id must be positive");
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (b > 0 && blocks[b].number != blocks[b - 1].number + 1) {
      return InvalidArgumentError("blocks to apply must be consecutive");
    }
    for (const ActivityRecord& row : blocks[b].rows) {
      if (row.chain_id != chain_id) {
        return InvalidArgumentError("block rows must all be of chain " + std::to_string(chain_id));
      }
      ADS_RETURN_IF_ERROR(ValidateIds(row));
    }
  }
  return OkStatus();
}

// The block's rows, one per key (an upsert statement may not change a row twice).
std::vector<ActivityRecord> MergedRows(const IndexedBlock& block) {
  std::map<Key, ActivityRecord> merged;
  for (const ActivityRecord& r : block.rows) {
    auto [it, inserted] = merged.try_emplace(KeyOf(r), r);
    if (inserted) continue;
    it->second.last_seen = std::max(it->second.last_seen, r.last_seen);
    it->second.count += r.count;
  }
  std::vector<ActivityRecord> out;
  out.reserve(merged.size());
  for (auto& [key, r] : merged) out.push_back(r);
  return out;
}

// Journals the values before the block of the entries it changes (NULL: absent).
constexpr std::string_view kJournalUndoSql =
    "INSERT INTO chain_block_undo (chain_id, number, wallet, project_id, last_seen, count) "
    "SELECT $1, $2, decode(t.w, 'hex'), t.p, a.last_seen, a.count "
    "FROM unnest($3::text[], $4::bigint[]) AS t (w, p) LEFT JOIN wallet_activity a "
    "ON a.wallet = decode(t.w, 'hex') AND a.project_id = t.p AND a.chain_id = $1";

// The values to restore when the blocks after $2 are undone: per entry, the one journaled by
// the oldest of them; none for projects deleted since.
constexpr std::string_view kRestoredSql =
    "SELECT wallet, project_id, chain_id, last_seen, count FROM ("
    "SELECT DISTINCT ON (wallet, project_id) wallet, project_id, chain_id, last_seen, count "
    "FROM chain_block_undo WHERE chain_id = $1 AND number > $2 "
    "ORDER BY wallet, project_id, number) u "
    "WHERE EXISTS (SELECT 1 FROM projects p WHERE p.id = u.project_id)";

}  // namespace

Result<std::optional<uint64_t>> PostgresActivityStore::LockCheckpoint(int64_t chain_id) {
  ADS_ASSIGN_OR_RETURN(PgResult r,
                       conn_->Exec("SELECT next_block FROM chain_checkpoints WHERE chain_id = $1 "
                                   "FOR UPDATE",
                                   {Param(chain_id)}));
  if (r.rows() == 0) return std::optional<uint64_t>();
  ADS_ASSIGN_OR_RETURN(int64_t next, r.Int(0, 0));
  return std::optional<uint64_t>(static_cast<uint64_t>(next));
}

Result<ChainCheckpoint> PostgresActivityStore::LoadCheckpoint(int64_t chain_id) {
  MutexLock lock(mu_);
  // One snapshot: the checkpoint and its journal agree.
  ADS_ASSIGN_OR_RETURN(
      PgTransaction txn,
      PgTransaction::Begin(*conn_, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
  ADS_ASSIGN_OR_RETURN(PgResult next,
                       conn_->Exec("SELECT next_block FROM chain_checkpoints WHERE chain_id = $1",
                                   {Param(chain_id)}));
  if (next.rows() == 0) return NotFoundError("no checkpoint for chain " + std::to_string(chain_id));
  ChainCheckpoint checkpoint;
  ADS_ASSIGN_OR_RETURN(int64_t next_block, next.Int(0, 0));
  checkpoint.next_block = static_cast<uint64_t>(next_block);
  ADS_ASSIGN_OR_RETURN(PgResult blocks,
                       conn_->Exec("SELECT number, hash, parent_hash FROM chain_blocks "
                                   "WHERE chain_id = $1 ORDER BY number",
                                   {Param(chain_id)}));
  for (int i = 0; i < blocks.rows(); ++i) {
    ADS_ASSIGN_OR_RETURN(int64_t number, blocks.Int(i, 0));
    checkpoint.recent.push_back({.number = static_cast<uint64_t>(number),
                                 .hash = std::string(blocks.Text(i, 1)),
                                 .parent_hash = std::string(blocks.Text(i, 2))});
  }
  ADS_RETURN_IF_ERROR(txn.Commit());
  return checkpoint;
}

Status PostgresActivityStore::ResetCheckpoint(int64_t chain_id, const ChainCheckpoint& checkpoint) {
  if (chain_id <= 0) return InvalidArgumentError("chain id must be positive");
  const std::vector<BlockRef>& recent = checkpoint.recent;
  for (size_t i = 0; i < recent.size(); ++i) {
    uint64_t expected = checkpoint.next_block - (recent.size() - i);
    if (checkpoint.next_block < recent.size() || recent[i].number != expected) {
      return InvalidArgumentError("checkpoint blocks must be consecutive up to the next block");
    }
  }
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
  ADS_RETURN_IF_ERROR(Run(*conn_,
                          "INSERT INTO chain_checkpoints (chain_id, next_block) "
                          "VALUES ($1, $2) ON CONFLICT (chain_id) DO UPDATE "
                          "SET next_block = EXCLUDED.next_block",
                          {Param(chain_id), BlockParam(checkpoint.next_block)}));
  ADS_RETURN_IF_ERROR(
      Run(*conn_, "DELETE FROM chain_blocks WHERE chain_id = $1", {Param(chain_id)}));
  size_t skip = recent.size() > kJournalDepth ? recent.size() - kJournalDepth : 0;
  for (size_t i = skip; i < recent.size(); ++i) {
    ADS_RETURN_IF_ERROR(Run(*conn_,
                            "INSERT INTO chain_blocks (chain_id, number, hash, "
                            "parent_hash) VALUES ($1, $2, $3, $4)",
                            {Param(chain_id), BlockParam(recent[i].number), Param(recent[i].hash),
                             Param(recent[i].parent_hash)}));
  }
  return txn.Commit();
}

Status PostgresActivityStore::ApplyBlocks(int64_t chain_id, std::span<const IndexedBlock> blocks) {
  ADS_RETURN_IF_ERROR(ValidateBlocks(chain_id, blocks));
  if (blocks.empty()) return OkStatus();
  const IndexedBlock& first = blocks.front();
  const uint64_t last = blocks.back().number;
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
  // Locked to commit: a second indexer of the chain (two nodes both believing they lead for a
  // moment) waits here, then finds the checkpoint moved and writes nothing.
  ADS_ASSIGN_OR_RETURN(std::optional<uint64_t> next, LockCheckpoint(chain_id));
  if (next && *next != first.number) {
    return ConflictError(BlockName(chain_id, first.number) +
                         " does not follow the checkpoint (next block " + std::to_string(*next) +
                         ")");
  }
  if (!next) {
    ADS_RETURN_IF_ERROR(Run(*conn_,
                            "INSERT INTO chain_checkpoints (chain_id, next_block) "
                            "VALUES ($1, $2)",
                            {Param(chain_id), BlockParam(first.number)}));
  } else if (first.number > 0 && !first.parent_hash.empty()) {
    ADS_ASSIGN_OR_RETURN(PgResult tip,
                         conn_->Exec("SELECT hash FROM chain_blocks WHERE "
                                     "chain_id = $1 AND number = $2",
                                     {Param(chain_id), BlockParam(first.number - 1)}));
    if (tip.rows() == 1 && tip.Text(0, 0) != first.parent_hash) {
      return ConflictError(BlockName(chain_id, first.number) +
                           " is not a child of the journal's newest block");
    }
  }
  // Writers of wallet_activity wait for one another: the undo values read are the upsert's.
  ADS_RETURN_IF_ERROR(Run(*conn_, "SELECT pg_advisory_xact_lock($1)", {Param(kLock)}));
  for (const IndexedBlock& block : blocks) ADS_RETURN_IF_ERROR(ApplyBlock(chain_id, block));
  ADS_RETURN_IF_ERROR(Run(*conn_,
                          "UPDATE chain_checkpoints SET next_block = $2 "
                          "WHERE chain_id = $1",
                          {Param(chain_id), BlockParam(last + 1)}));
  if (last >= kJournalDepth) {
    ADS_RETURN_IF_ERROR(Run(*conn_,
                            "DELETE FROM chain_blocks WHERE chain_id = $1 AND "
                            "number < $2",
                            {Param(chain_id), BlockParam(last - kJournalDepth + 1)}));
  }
  return txn.Commit();
}

Status PostgresActivityStore::ApplyBlock(int64_t chain_id, const IndexedBlock& block) {
  ADS_RETURN_IF_ERROR(Run(
      *conn_,
      "INSERT INTO chain_blocks (chain_id, number, hash, parent_hash) "
      "VALUES ($1, $2, $3, $4)",
      {Param(chain_id), BlockParam(block.number), Param(block.hash), Param(block.parent_hash)}));
  std::vector<ActivityRecord> rows = MergedRows(block);
  if (rows.empty()) return OkStatus();
  ArrayParams params;
  for (const ActivityRecord& r : rows) params.Add(r);
  std::vector<PgParam> keys = params.Keys();
  ADS_RETURN_IF_ERROR(
      Run(*conn_, kJournalUndoSql, {Param(chain_id), BlockParam(block.number), keys[0], keys[1]}));
  return NameMissingProject(RunBatches(*conn_, kAddSql, rows, false));
}

Status PostgresActivityStore::UndoBlocksAfter(int64_t chain_id, uint64_t ancestor) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
  ADS_ASSIGN_OR_RETURN(std::optional<uint64_t> next, LockCheckpoint(chain_id));
  if (!next || *next == 0 || ancestor >= *next - 1) return OkStatus();  // nothing to undo
  ADS_ASSIGN_OR_RETURN(
      PgResult oldest,
      conn_->Exec("SELECT min(number) FROM chain_blocks WHERE chain_id = $1", {Param(chain_id)}));
  bool reaches = !oldest.IsNull(0, 0);
  if (reaches) {
    ADS_ASSIGN_OR_RETURN(int64_t min_number, oldest.Int(0, 0));
    reaches = static_cast<uint64_t>(min_number) <= ancestor + 1;
  }
  if (!reaches) {
    return ConflictError(
        "reorg deeper than the undo journal: " + BlockName(chain_id, ancestor + 1) +
        " cannot be undone (the journal keeps " + std::to_string(kJournalDepth) + " blocks)");
  }
  ADS_RETURN_IF_ERROR(Run(*conn_, "SELECT pg_advisory_xact_lock($1)", {Param(kLock)}));
  ADS_ASSIGN_OR_RETURN(PgResult r,
                       conn_->Exec(kRestoredSql, {Param(chain_id), BlockParam(ancestor)}));
  std::vector<ActivityRecord> present, removed;
  for (int i = 0; i < r.rows(); ++i) {
    ActivityRecord row;
    ADS_RETURN_IF_ERROR(ReadRecord(r, i, 0, row));
    (r.IsNull(i, 4) ? removed : present).push_back(row);
  }
  // As PutActivityValues: absolute values, so every replica ends up with them.
  ADS_RETURN_IF_ERROR(RunBatches(*conn_, kDeleteSql, removed, true));
  ADS_RETURN_IF_ERROR(NameMissingProject(RunBatches(*conn_, kPutSql, present, false)));
  ADS_RETURN_IF_ERROR(Run(*conn_, "DELETE FROM chain_blocks WHERE chain_id = $1 AND number > $2",
                          {Param(chain_id), BlockParam(ancestor)}));
  ADS_RETURN_IF_ERROR(Run(*conn_,
                          "UPDATE chain_checkpoints SET next_block = $2 "
                          "WHERE chain_id = $1",
                          {Param(chain_id), BlockParam(ancestor + 1)}));
  return txn.Commit();
}

Result<int64_t> PostgresActivityStore::PruneChangesBefore(int64_t cutoff) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
  // Under the writers' lock: pruned_through and the deleted entries move together.
  ADS_RETURN_IF_ERROR(conn_->Exec("SELECT pg_advisory_xact_lock($1)", {Param(kLock)}).status());
  // A prefix of the log, even if the server's clock stepped back.
  ADS_ASSIGN_OR_RETURN(
      PgResult r,
      conn_->Exec("WITH gone AS (DELETE FROM activity_changes WHERE seq <= (SELECT max(seq) "
                  "FROM activity_changes WHERE changed_at < $1) RETURNING seq) "
                  "SELECT count(*), coalesce(max(seq), 0) FROM gone",
                  {Param(cutoff)}));
  ADS_ASSIGN_OR_RETURN(int64_t deleted, r.Int(0, 0));
  ADS_ASSIGN_OR_RETURN(int64_t through, r.Int(0, 1));
  if (deleted > 0) {
    ADS_RETURN_IF_ERROR(conn_->Exec("UPDATE activity_log SET pruned_through = "
                                    "greatest(pruned_through, $1)",
                                    {Param(through)})
                            .status());
  }
  ADS_RETURN_IF_ERROR(txn.Commit());
  return deleted;
}

}  // namespace adserver::store
