#pragma once

// On-disk records of the live indexer's undo journal (two named LMDB databases next to the
// wallet activity). Keys are big-endian so that a cursor walks a chain's blocks in order.
//   journal:     chain id (u64 BE) + block number (u64 BE) -> JournalRecord
//   checkpoints: chain id (u64 BE)                         -> next block (u64 BE)
// JournalRecord = varint(len) hash, varint(len) parent hash, varint(entry count), then per
// entry: 20-byte wallet, varint(project id), u8 present, [varint(day), varint(count)].

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/address.h"

namespace adserver::store::detail {

// One (wallet, project) entry of the block's chain that a block changed, and its value before.
struct JournalEntry {
  Address wallet;
  uint32_t project_id = 0;
  // nullopt: the wallet had no entry for (project, chain) before the block.
  std::optional<uint32_t> previous_day;
  uint32_t previous_count = 0;  // meaningful only with previous_day
  bool operator==(const JournalEntry&) const = default;
};

struct JournalRecord {
  std::string hash;
  std::string parent_hash;  // empty when unknown (blocks migrated from a checkpoint file)
  std::vector<JournalEntry> entries;
};

using JournalKey = std::array<uint8_t, 16>;
using CheckpointKey = std::array<uint8_t, 8>;

JournalKey MakeJournalKey(uint64_t chain_id, uint64_t block);
// Splits a journal key; false if `key` is not 16 bytes.
bool ParseJournalKey(std::span<const uint8_t> key, uint64_t& chain_id, uint64_t& block);
CheckpointKey MakeCheckpointKey(uint64_t chain_id);

void EncodeJournalRecord(const JournalRecord& record, std::string& out);
// False (out unspecified) if `data` is not a valid encoding.
bool DecodeJournalRecord(std::span<const uint8_t> data, JournalRecord& out);
// Only the hashes (out.entries is left empty): what a checkpoint needs, without the entries.
bool DecodeJournalHashes(std::span<const uint8_t> data, JournalRecord& out);

std::array<uint8_t, 8> EncodeBlockNumber(uint64_t block);
// False if `data` is not 8 bytes.
bool DecodeBlockNumber(std::span<const uint8_t> data, uint64_t& block);

}  // namespace adserver::store::detail
