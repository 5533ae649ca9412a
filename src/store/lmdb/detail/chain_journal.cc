#include "store/lmdb/detail/chain_journal.h"

#include <lmdb.h>

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include "store/lmdb/detail/activity_codec.h"
#include "store/lmdb/detail/block_journal.h"

namespace adserver::store::detail {
namespace {

std::span<const uint8_t> Bytes(const MDB_val& v) {
  return {static_cast<const uint8_t*>(v.mv_data), v.mv_size};
}

template <size_t N>
MDB_val ValOf(const std::array<uint8_t, N>& bytes) {
  return MDB_val{N, const_cast<uint8_t*>(bytes.data())};
}

// Sets the (project, chain) entry of `items` (sorted) back to its journaled previous value.
void RestoreEntry(const JournalEntry& entry, uint32_t chain,
                  std::vector<decision::Interaction>& items) {
  auto it = std::find_if(items.begin(), items.end(), [&](const decision::Interaction& i) {
    return i.project_id == entry.project_id && i.chain_id == chain;
  });
  if (!entry.previous_day) {
    if (it != items.end()) items.erase(it);
    return;
  }
  decision::Interaction previous{.project_id = entry.project_id,
                                 .chain_id = chain,
                                 .last_seen_day = *entry.previous_day,
                                 .count = entry.previous_count};
  if (it != items.end()) {
    *it = previous;
  } else {
    items.push_back(previous);
    NormalizeInteractions(items);
  }
}

// The journal entries for `wallet`'s rows (sorted by project): the value each (project, chain)
// entry had in `items` before the block.
void AddJournalEntries(const Address& wallet, std::span<const ActivityRecord> rows, uint32_t chain,
                       std::span<const decision::Interaction> items,
                       std::vector<JournalEntry>& out) {
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i > 0 && rows[i].project_id == rows[i - 1].project_id) continue;
    JournalEntry entry{.wallet = wallet, .project_id = Clamp32(rows[i].project_id)};
    for (const decision::Interaction& item : items) {
      if (item.project_id == entry.project_id && item.chain_id == chain) {
        entry.previous_day = item.last_seen_day;
        entry.previous_count = item.count;
      }
    }
    out.push_back(entry);
  }
}

Status ValidateBlocks(int64_t chain_id, std::span<const IndexedBlock> blocks) {
  if (chain_id <= 0 || chain_id > std::numeric_limits<uint32_t>::max()) {
    return InvalidArgumentError("chain id " + std::to_string(chain_id) + " out of range");
  }
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (b > 0 && blocks[b].number != blocks[b - 1].number + 1) {
      return InvalidArgumentError("blocks to apply must be consecutive");
    }
    for (const ActivityRecord& row : blocks[b].rows) {
      if (row.chain_id != chain_id) {
        return InvalidArgumentError("block rows must all be of chain " + std::to_string(chain_id));
      }
      if (row.project_id <= 0)
        return InvalidArgumentError("activity rows need positive project ids");
    }
  }
  return OkStatus();
}

std::string BlockName(int64_t chain_id, uint64_t block) {
  return "block " + std::to_string(block) + " of chain " + std::to_string(chain_id);
}

}  // namespace

Status ChainJournal::Open() {
  ADS_RETURN_IF_ERROR(journal_.Create());
  return checkpoints_.Create();
}

Result<std::optional<uint64_t>> ChainJournal::GetCheckpoint(MDB_txn* txn, int64_t chain_id) const {
  CheckpointKey key_bytes = MakeCheckpointKey(static_cast<uint64_t>(chain_id));
  MDB_val key = ValOf(key_bytes), value;
  int rc = mdb_get(txn, CheckpointDbi(), &key, &value);
  if (rc == MDB_NOTFOUND) return std::optional<uint64_t>();
  if (rc != 0) return LmdbError("get checkpoint", rc);
  uint64_t next = 0;
  if (!DecodeBlockNumber(Bytes(value), next)) return InternalError("corrupt checkpoint");
  return std::optional<uint64_t>(next);
}

Status ChainJournal::PutCheckpoint(MDB_txn* txn, int64_t chain_id, uint64_t next_block) {
  CheckpointKey key_bytes = MakeCheckpointKey(static_cast<uint64_t>(chain_id));
  std::array<uint8_t, 8> value_bytes = EncodeBlockNumber(next_block);
  MDB_val key = ValOf(key_bytes), value = ValOf(value_bytes);
  if (int rc = mdb_put(txn, CheckpointDbi(), &key, &value, 0); rc != 0) {
    return LmdbError("put checkpoint", rc);
  }
  return OkStatus();
}

Result<ChainCheckpoint> ChainJournal::LoadCheckpoint(int64_t chain_id) {
  ADS_RETURN_IF_ERROR(Open());
  LmdbTxn txn(env_, LmdbTxn::Mode::kRead);
  ADS_RETURN_IF_ERROR(txn.status());
  ADS_ASSIGN_OR_RETURN(std::optional<uint64_t> next, GetCheckpoint(txn.get(), chain_id));
  if (!next) return NotFoundError("no checkpoint for chain " + std::to_string(chain_id));
  ChainCheckpoint checkpoint{.next_block = *next, .recent = {}};
  MDB_cursor* cursor = nullptr;
  if (int rc = mdb_cursor_open(txn.get(), JournalDbi(), &cursor); rc != 0) {
    return LmdbError("cursor", rc);
  }
  JournalKey first = MakeJournalKey(static_cast<uint64_t>(chain_id), 0);
  MDB_val key = ValOf(first), value;
  Status status;
  JournalRecord record;
  for (int rc = mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE); rc == 0;
       rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    uint64_t chain = 0, block = 0;
    if (!ParseJournalKey(Bytes(key), chain, block) || chain != static_cast<uint64_t>(chain_id)) {
      break;
    }
    if (!DecodeJournalHashes(Bytes(value), record)) {
      status = InternalError("corrupt journal record for " + BlockName(chain_id, block));
      break;
    }
    checkpoint.recent.push_back({block, record.hash, record.parent_hash});
  }
  mdb_cursor_close(cursor);
  if (!status.ok()) return status;
  return checkpoint;
}

Status ChainJournal::DeleteJournalBefore(MDB_txn* txn, int64_t chain_id, uint64_t before) {
  JournalKey first = MakeJournalKey(static_cast<uint64_t>(chain_id), 0);
  while (true) {
    MDB_val key = ValOf(first), value;
    MDB_cursor* cursor = nullptr;
    if (int rc = mdb_cursor_open(txn, JournalDbi(), &cursor); rc != 0) {
      return LmdbError("cursor", rc);
    }
    // The chain's oldest journaled block, deleted while it is before `before`.
    int rc = mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE);
    uint64_t chain = 0, block = 0;
    bool del = rc == 0 && ParseJournalKey(Bytes(key), chain, block) &&
               chain == static_cast<uint64_t>(chain_id) && block < before;
    if (del) rc = mdb_cursor_del(cursor, 0);
    mdb_cursor_close(cursor);
    if (!del) return OkStatus();
    if (rc != 0) return LmdbError("delete journal", rc);
  }
}

Status ChainJournal::ResetCheckpoint(int64_t chain_id, const ChainCheckpoint& checkpoint) {
  if (chain_id <= 0) return InvalidArgumentError("chain id must be positive");
  const std::vector<BlockRef>& recent = checkpoint.recent;
  for (size_t i = 0; i < recent.size(); ++i) {
    uint64_t expected = checkpoint.next_block - (recent.size() - i);
    if (checkpoint.next_block < recent.size() || recent[i].number != expected) {
      return InvalidArgumentError("checkpoint blocks must be consecutive up to the next block");
    }
  }
  ADS_RETURN_IF_ERROR(Open());
  LmdbTxn txn(env_, LmdbTxn::Mode::kWrite);
  ADS_RETURN_IF_ERROR(txn.status());
  ADS_RETURN_IF_ERROR(
      DeleteJournalBefore(txn.get(), chain_id, std::numeric_limits<uint64_t>::max()));
  size_t skip = recent.size() > kJournalDepth ? recent.size() - kJournalDepth : 0;
  std::string encoded;
  for (size_t i = skip; i < recent.size(); ++i) {
    encoded.clear();
    EncodeJournalRecord({.hash = recent[i].hash, .parent_hash = recent[i].parent_hash}, encoded);
    JournalKey key_bytes = MakeJournalKey(static_cast<uint64_t>(chain_id), recent[i].number);
    MDB_val key = ValOf(key_bytes), value{encoded.size(), encoded.data()};
    if (int rc = mdb_put(txn.get(), JournalDbi(), &key, &value, 0); rc != 0) {
      return LmdbError("put journal", rc);
    }
  }
  ADS_RETURN_IF_ERROR(PutCheckpoint(txn.get(), chain_id, checkpoint.next_block));
  if (int rc = txn.Commit(); rc != 0) return LmdbError("commit", rc);
  return OkStatus();
}

Status ChainJournal::ApplyBlocks(int64_t chain_id, std::span<const IndexedBlock> blocks) {
  ADS_RETURN_IF_ERROR(ValidateBlocks(chain_id, blocks));
  if (blocks.empty()) return OkStatus();
  ADS_RETURN_IF_ERROR(Open());
  ADS_RETURN_IF_ERROR(changes_.Create());
  LmdbTxn txn(env_, LmdbTxn::Mode::kWrite);
  ADS_RETURN_IF_ERROR(txn.status());
  changes_.Clear();
  ADS_ASSIGN_OR_RETURN(std::optional<uint64_t> next, GetCheckpoint(txn.get(), chain_id));
  if (next && *next != blocks.front().number) {
    return ConflictError(BlockName(chain_id, blocks.front().number) +
                         " does not follow the checkpoint (next block " + std::to_string(*next) +
                         ")");
  }
  for (const IndexedBlock& block : blocks)
    ADS_RETURN_IF_ERROR(ApplyBlock(txn.get(), chain_id, block));
  ADS_RETURN_IF_ERROR(PruneJournal(txn.get(), chain_id, blocks.back().number));
  ADS_RETURN_IF_ERROR(PutCheckpoint(txn.get(), chain_id, blocks.back().number + 1));
  ADS_RETURN_IF_ERROR(changes_.Write(txn.get(), /*bulk=*/false));
  if (int rc = txn.Commit(); rc != 0) return LmdbError("commit", rc);
  return OkStatus();
}

Status ChainJournal::ApplyBlock(MDB_txn* txn, int64_t chain_id, const IndexedBlock& block) {
  std::vector<ActivityRecord> sorted = block.rows;
  std::sort(sorted.begin(), sorted.end(), [](const ActivityRecord& a, const ActivityRecord& b) {
    return a.wallet != b.wallet ? a.wallet < b.wallet : a.project_id < b.project_id;
  });
  const uint32_t chain = Clamp32(chain_id);
  JournalRecord record{.hash = block.hash, .parent_hash = block.parent_hash, .entries = {}};
  std::vector<decision::Interaction> items;
  for (size_t begin = 0, end = 0; begin < sorted.size(); begin = end) {
    const Address wallet = sorted[begin].wallet;
    while (end < sorted.size() && sorted[end].wallet == wallet) ++end;
    ADS_RETURN_IF_ERROR(wallets_.Read(txn, wallet, items));
    std::span<const ActivityRecord> rows(sorted.data() + begin, end - begin);
    AddJournalEntries(wallet, rows, chain, items, record.entries);
    for (const ActivityRecord& row : rows) items.push_back(ToInteraction(row));
    NormalizeInteractions(items);
    ADS_RETURN_IF_ERROR(wallets_.Write(txn, wallet, items));
  }
  std::string encoded;
  EncodeJournalRecord(record, encoded);
  JournalKey key_bytes = MakeJournalKey(static_cast<uint64_t>(chain_id), block.number);
  MDB_val key = ValOf(key_bytes), value{encoded.size(), encoded.data()};
  if (int rc = mdb_put(txn, JournalDbi(), &key, &value, 0); rc != 0) {
    return LmdbError("put journal", rc);
  }
  return OkStatus();
}

Status ChainJournal::PruneJournal(MDB_txn* txn, int64_t chain_id, uint64_t newest) {
  if (newest < kJournalDepth) return OkStatus();
  return DeleteJournalBefore(txn, chain_id, newest - kJournalDepth + 1);
}

Status ChainJournal::UndoBlocksAfter(int64_t chain_id, uint64_t ancestor) {
  ADS_RETURN_IF_ERROR(Open());
  ADS_RETURN_IF_ERROR(changes_.Create());
  LmdbTxn txn(env_, LmdbTxn::Mode::kWrite);
  ADS_RETURN_IF_ERROR(txn.status());
  changes_.Clear();
  ADS_ASSIGN_OR_RETURN(std::optional<uint64_t> next, GetCheckpoint(txn.get(), chain_id));
  if (!next || *next == 0 || ancestor >= *next - 1) return OkStatus();  // nothing to undo
  // Newest first: each block's previous values are those its successor found. An error aborts
  // the transaction, so either every block is undone or none.
  for (uint64_t block = *next - 1; block > ancestor; --block) {
    ADS_RETURN_IF_ERROR(UndoBlock(txn.get(), chain_id, block));
  }
  ADS_RETURN_IF_ERROR(PutCheckpoint(txn.get(), chain_id, ancestor + 1));
  ADS_RETURN_IF_ERROR(changes_.Write(txn.get(), /*bulk=*/false));
  if (int rc = txn.Commit(); rc != 0) return LmdbError("commit", rc);
  return OkStatus();
}

Status ChainJournal::UndoBlock(MDB_txn* txn, int64_t chain_id, uint64_t number) {
  JournalKey key_bytes = MakeJournalKey(static_cast<uint64_t>(chain_id), number);
  MDB_val key = ValOf(key_bytes), value;
  int rc = mdb_get(txn, JournalDbi(), &key, &value);
  if (rc == MDB_NOTFOUND) {
    return ConflictError("reorg deeper than the undo journal: " + BlockName(chain_id, number) +
                         " cannot be undone (the journal keeps " + std::to_string(kJournalDepth) +
                         " blocks)");
  }
  if (rc != 0) return LmdbError("get journal", rc);
  JournalRecord record;
  if (!DecodeJournalRecord(Bytes(value), record)) {
    return InternalError("corrupt journal record for " + BlockName(chain_id, number));
  }
  // Entries are sorted by wallet (ApplyBlock): one read and one write per wallet.
  const uint32_t chain = Clamp32(chain_id);
  std::vector<decision::Interaction> items;
  for (size_t begin = 0, end = 0; begin < record.entries.size(); begin = end) {
    const Address wallet = record.entries[begin].wallet;
    ADS_RETURN_IF_ERROR(wallets_.Read(txn, wallet, items));
    for (; end < record.entries.size() && record.entries[end].wallet == wallet; ++end) {
      RestoreEntry(record.entries[end], chain, items);
    }
    ADS_RETURN_IF_ERROR(wallets_.Write(txn, wallet, items));
  }
  if (rc = mdb_del(txn, JournalDbi(), &key, nullptr); rc != 0) return LmdbError("del journal", rc);
  return OkStatus();
}

}  // namespace adserver::store::detail
