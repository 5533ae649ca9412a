#include "ingest/chain/chain_indexer.h"

#include <algorithm>
#include <fstream>

#include "common/log.h"
#include "common/mutex.h"
#include "store/chain_ledger.h"
#include "store/inventory_store.h"

namespace adserver::ingest::chain {
namespace {

constexpr auto kRegistryReload = std::chrono::seconds(5);

// The checkpoint file of earlier versions: text "next\n(block hash\n)*". Keeps the hashes that
// run consecutively up to next - 1 (what ResetCheckpoint accepts).
std::optional<store::ChainCheckpoint> LoadLegacyCheckpoint(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  store::ChainCheckpoint c;
  if (!(in >> c.next_block)) return std::nullopt;
  uint64_t n;
  std::string hash;
  while (in >> n >> hash) {
    if (!c.recent.empty() && n != c.recent.back().number + 1) c.recent.clear();
    c.recent.push_back({.number = n, .hash = hash, .parent_hash = ""});
  }
  if (!c.recent.empty() && c.recent.back().number + 1 != c.next_block) c.recent.clear();
  if (c.recent.size() > store::kJournalDepth) {
    c.recent.erase(c.recent.begin(), c.recent.end() - store::kJournalDepth);
  }
  return c;
}

// True if the source's hash is the journal's (hex text, as the node gave it).
bool SameHash(const std::optional<Hash32>& source, const std::string& journal) {
  return source.has_value() && ParseHash32(journal) == source;
}

store::IndexedBlock ToIndexedBlock(const ChainBlock& block,
                                   std::span<const ChainInteraction> interactions) {
  store::IndexedBlock out{.number = block.number,
                          .hash = FormatHash32(block.hash),
                          .parent_hash = FormatHash32(block.parent_hash),
                          .rows = {}};
  // Activity keeps days: the last-seen time is the start of the block's UTC day.
  int64_t day_start = block.timestamp / 86400 * 86400;
  for (const ChainInteraction& i : interactions) {
    out.rows.push_back({i.wallet, i.project_id, i.chain_id, day_start, 1});
  }
  return out;
}

}  // namespace

ChainIndexer::ChainIndexer(ChainSource& source, store::InventoryStore& registry,
                           store::ChainLedger& ledger, IndexerOptions options, BlockSink* sink)
    : source_(source),
      registry_(registry),
      ledger_(ledger),
      options_(std::move(options)),
      sink_(sink) {}

ChainIndexer::~ChainIndexer() = default;

Status ChainIndexer::Run() {
  ADS_RETURN_IF_ERROR(LoadRegistry());
  ADS_LOG(info, "indexer following", "chain", options_.chain_id, "confirmations",
          options_.confirmations);
  auto backoff = options_.min_backoff;
  auto registry_loaded = std::chrono::steady_clock::now();
  while (!stopped()) {
    Result<bool> progressed = Step();
    if (!fatal_.ok()) return fatal_;
    if (!progressed.ok()) {
      ADS_LOG(warn, "indexer retrying", "status", progressed.status(), "backoff_ms",
              backoff.count());
      WaitUnlessStopped(backoff);
      backoff = std::min(backoff * 2, options_.max_backoff);
      continue;
    }
    backoff = options_.min_backoff;
    if (std::chrono::steady_clock::now() - registry_loaded > kRegistryReload) {
      // A failed reload (e.g. the database is busy) keeps the registry loaded before.
      if (Status st = LoadRegistry(); !st.ok()) {
        ADS_LOG(warn, "indexer keeps its registry; reload failed", "status", st);
      }
      registry_loaded = std::chrono::steady_clock::now();
    }
    if (!*progressed) WaitUnlessStopped(options_.poll_interval);
  }
  return OkStatus();
}

void ChainIndexer::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  stop_cv_.NotifyAll();
}

bool ChainIndexer::stopped() {
  MutexLock lock(mu_);
  return stop_;
}

bool ChainIndexer::WaitUnlessStopped(std::chrono::milliseconds duration) {
  MutexLock lock(mu_);
  waiting_ = true;
  stop_cv_.NotifyAll();  // for WaitUntilWaitingForTest
  bool stopped = stop_cv_.WaitFor(mu_, duration, [this]() ADS_REQUIRES(mu_) { return stop_; });
  waiting_ = false;
  return stopped;
}

bool ChainIndexer::WaitUntilWaitingForTest(std::chrono::seconds deadline) {
  MutexLock lock(mu_);
  return stop_cv_.WaitFor(mu_, deadline, [this]() ADS_REQUIRES(mu_) { return waiting_; });
}

Status ChainIndexer::LoadRegistry() {
  ADS_ASSIGN_OR_RETURN(auto projects, registry_.ListProjects());
  contracts_.clear();
  for (const auto& p : projects) {
    for (const auto& c : p.contracts) {
      if (c.chain_id == options_.chain_id) contracts_[c.address] = p.id;
    }
  }
  emitters_.clear();
  for (const auto& [address, project] : contracts_) emitters_.push_back(address);
  return OkStatus();
}

Result<store::ChainCheckpoint> ChainIndexer::LoadOrStartCheckpoint(uint64_t head) {
  Result<store::ChainCheckpoint> loaded = ledger_.LoadCheckpoint(options_.chain_id);
  if (loaded.status().code() != Code::kNotFound) return loaded;
  store::ChainCheckpoint start{.next_block = options_.from_block.value_or(head), .recent = {}};
  if (auto legacy = LoadLegacyCheckpoint(legacy_checkpoint_path_)) {
    start = std::move(*legacy);
    ADS_LOG(info, "indexer checkpoint migrated into the activity index; file no longer used",
            "file", legacy_checkpoint_path_);
  }
  ADS_RETURN_IF_ERROR(ledger_.ResetCheckpoint(options_.chain_id, start));
  ADS_LOG(info, "indexer starts", "chain", options_.chain_id, "block", start.next_block);
  return start;
}

Result<bool> ChainIndexer::Step() {
  ADS_ASSIGN_OR_RETURN(uint64_t head, source_.HeadBlockNumber());
  head_.store(head, std::memory_order_relaxed);
  ADS_ASSIGN_OR_RETURN(store::ChainCheckpoint cp, LoadOrStartCheckpoint(head));
  next_block_.store(cp.next_block, std::memory_order_relaxed);
  uint64_t confirmations = static_cast<uint64_t>(options_.confirmations);
  uint64_t target = head >= confirmations ? head - confirmations : 0;
  if (cp.next_block > target) return CheckTip(cp);
  uint64_t to = std::min(target, cp.next_block + uint64_t(options_.batch_blocks) - 1);
  ADS_ASSIGN_OR_RETURN(std::vector<ChainBlock> blocks,
                       source_.GetBlocks(cp.next_block, to, emitters_));
  if (blocks.empty()) return false;
  if (!cp.recent.empty() && !SameHash(blocks.front().parent_hash, cp.recent.back().hash)) {
    return Rewind(cp);
  }
  Result<bool> applied = Apply(blocks);
  if (applied.ok()) next_block_.store(blocks.back().number + 1, std::memory_order_relaxed);
  return applied;
}

Result<bool> ChainIndexer::Apply(std::span<const ChainBlock> blocks) {
  std::vector<store::IndexedBlock> indexed;
  std::vector<AppliedBlock> applied;
  indexed.reserve(blocks.size());
  for (const ChainBlock& block : blocks) {
    std::vector<ChainInteraction> interactions = Interactions(block);
    indexed.push_back(ToIndexedBlock(block, interactions));
    if (sink_ == nullptr) continue;
    applied.push_back({.number = block.number,
                       .hash = block.hash,
                       .timestamp = block.timestamp,
                       .confirmed = options_.confirmations > 0,
                       .interactions = std::move(interactions)});
  }
  // The sink first (see BlockSink): what it records is idempotent, the commit is not undone.
  if (sink_ != nullptr) ADS_RETURN_IF_ERROR(sink_->OnApplied(options_.chain_id, applied));
  ADS_RETURN_IF_ERROR(ledger_.ApplyBlocks(options_.chain_id, indexed));
  return true;
}

std::vector<ChainInteraction> ChainIndexer::Interactions(const ChainBlock& block) const {
  std::vector<ChainInteraction> out;
  for (const ChainTransaction& tx : block.transactions) {
    size_t first = out.size();  // this transaction's interactions start here
    auto add = [&](const Address& contract, std::optional<uint64_t> log_index) {
      auto it = contracts_.find(contract);
      if (it == contracts_.end()) return;
      for (size_t i = first; i < out.size(); ++i) {
        if (out[i].project_id == it->second) return;  // once per transaction and project
      }
      out.push_back({.wallet = tx.from,
                     .project_id = it->second,
                     .chain_id = options_.chain_id,
                     .tx_hash = tx.hash,
                     .log_index = log_index,
                     .block_number = block.number,
                     .block_time = block.timestamp});
    };
    if (tx.to) add(*tx.to, std::nullopt);
    for (const ChainLog& log : tx.logs) add(log.address, log.log_index);
  }
  return out;
}

Result<bool> ChainIndexer::CheckTip(const store::ChainCheckpoint& cp) {
  if (cp.recent.empty()) return false;
  uint64_t tip = cp.recent.back().number;
  ADS_ASSIGN_OR_RETURN(std::vector<std::optional<Hash32>> hashes,
                       source_.GetBlockHashes(std::span<const uint64_t>(&tip, 1)));
  if (hashes.size() != 1) return UnavailableError("block hash answer incomplete");
  if (SameHash(hashes[0], cp.recent.back().hash)) return false;
  return Rewind(cp);
}

Result<bool> ChainIndexer::Rewind(const store::ChainCheckpoint& cp) {
  ADS_ASSIGN_OR_RETURN(std::optional<uint64_t> ancestor, FindCommonAncestor(cp));
  if (!ancestor) {
    fatal_ = ConflictError("reorg deeper than the undo journal (" +
                           std::to_string(store::kJournalDepth) + " blocks) below block " +
                           std::to_string(cp.next_block) + " of chain " +
                           std::to_string(options_.chain_id) +
                           "; the index was left unchanged: restore it from a backup or rebuild "
                           "it (the indexer must re-apply this chain's blocks)");
    return fatal_;
  }
  if (*ancestor + 1 >= cp.next_block) {
    // The source's answers disagree (the tip is still there, yet a new block does not follow it).
    return UnavailableError("node answers disagree about block " +
                            std::to_string(cp.next_block - 1));
  }
  Status undone = ledger_.UndoBlocksAfter(options_.chain_id, *ancestor);
  if (undone.code() == Code::kConflict) fatal_ = undone;
  ADS_RETURN_IF_ERROR(undone);
  ADS_LOG(warn, "reorg: abandoned blocks undone", "chain", options_.chain_id, "from", *ancestor + 1,
          "to", cp.next_block - 1);
  NotifyReverted(cp, *ancestor);
  return true;
}

void ChainIndexer::NotifyReverted(const store::ChainCheckpoint& cp, uint64_t ancestor) {
  if (sink_ == nullptr) return;
  std::vector<RevertedBlock> reverted;
  for (auto it = cp.recent.rbegin(); it != cp.recent.rend() && it->number > ancestor; ++it) {
    // Journal hashes are the node's hex text; an unreadable one (never written by this
    // indexer) is reported as all zeros.
    reverted.push_back({.number = it->number, .hash = ParseHash32(it->hash).value_or(Hash32{})});
  }
  sink_->OnReverted(options_.chain_id, reverted);
}

Result<std::optional<uint64_t>> ChainIndexer::FindCommonAncestor(const store::ChainCheckpoint& cp) {
  const store::BlockRef& oldest = cp.recent.front();
  bool parent_known = !oldest.parent_hash.empty() && oldest.number > 0;
  std::vector<uint64_t> numbers;
  for (const store::BlockRef& b : cp.recent) numbers.push_back(b.number);
  if (parent_known) numbers.push_back(oldest.number - 1);
  ADS_ASSIGN_OR_RETURN(std::vector<std::optional<Hash32>> hashes, source_.GetBlockHashes(numbers));
  if (hashes.size() != numbers.size()) return UnavailableError("block hash answer incomplete");
  for (size_t i = cp.recent.size(); i-- > 0;) {
    if (SameHash(hashes[i], cp.recent[i].hash)) return std::optional<uint64_t>(cp.recent[i].number);
  }
  if (parent_known && SameHash(hashes.back(), oldest.parent_hash)) {
    return std::optional<uint64_t>(oldest.number - 1);
  }
  return std::optional<uint64_t>();
}

}  // namespace adserver::ingest::chain
