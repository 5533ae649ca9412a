#pragma once

// Read-optimised copy of the LMDB wallet index for serving: one memory-mapped file holding an
// open-addressing hash table of wallets, each pointing at the wallet's value exactly as LMDB
// stores it (detail/activity_codec.h). A lookup of one wallet touches two cache lines (its slot
// and its record) instead of a B-tree path; FindAll issues the probes of a whole batch before
// reading any of them, so the cache misses of 50 wallets overlap instead of adding up.
//
// The file is derived data: LMDB stays the system of record, and a table is a snapshot of it at
// one LMDB transaction id (`txn_id()`). LmdbActivityIndex decides when a table is current
// enough to answer from (see its read cache). Deleting the file loses nothing.
//
// File layout (little-endian): a 128-byte header (magic, version, txn id, LMDB file identity,
// wallet count, slot count, seed, records size), the records ([20-byte wallet][varint
// length][value bytes] each), then the slot array (8 bytes per slot: a 24-bit tag of the
// wallet's hash and the 40-bit offset + 1 of its record; 0 = empty), page-aligned.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/address.h"
#include "common/status.h"

namespace adserver::store {

// Identifies the LMDB environment a table was built from (device and inode of its data file),
// so a table never answers for a different (restored, replaced) index.
struct IndexIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  bool operator==(const IndexIdentity&) const = default;
};

// Builds a table file: records are streamed to a temporary file next to `path`, the slot array
// is kept in memory (8 bytes per slot) and written at the end. Not thread-safe.
class WalletTableBuilder {
 public:
  // `expected_wallets` sizes the hash table (load factor <= 0.6 for that many wallets; more
  // wallets are still accepted up to a load factor of 0.9; past that Add is InvalidArgument).
  // Unavailable if the temporary file cannot be created.
  static Result<std::unique_ptr<WalletTableBuilder>> Create(const std::string& path,
                                                            uint64_t expected_wallets);
  ~WalletTableBuilder();  // removes the temporary file unless Finish succeeded
  WalletTableBuilder(const WalletTableBuilder&) = delete;
  WalletTableBuilder& operator=(const WalletTableBuilder&) = delete;

  // Adds one wallet and its stored value. Each wallet at most once (not checked).
  Status Add(const Address& wallet, std::span<const uint8_t> value);
  // Completes the file (fsynced) and renames it to the path given to Create, tagged with the
  // LMDB transaction id and index identity it reflects. Unavailable on I/O errors.
  Status Finish(uint64_t txn_id, const IndexIdentity& identity);
  uint64_t wallet_count() const { return wallets_; }

 private:
  WalletTableBuilder(std::string path, std::string tmp_path, int fd, uint64_t slot_count);
  Status Flush();

  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
  bool finished_ = false;
  std::vector<uint64_t> slots_;
  std::vector<uint8_t> buffer_;  // records not yet written
  uint64_t records_size_ = 0;
  uint64_t wallets_ = 0;
  uint64_t seed_ = 0;
};

// An open table file, mapped read-only. Immutable; thread-safe.
class WalletTable {
 public:
  // Maps `path`. NotFound if there is no file, InvalidArgument if it is not a complete table
  // of this version (the caller rebuilds it).
  static Result<std::shared_ptr<const WalletTable>> Open(const std::string& path);
  ~WalletTable();
  WalletTable(const WalletTable&) = delete;
  WalletTable& operator=(const WalletTable&) = delete;

  uint64_t txn_id() const { return txn_id_; }
  const IndexIdentity& identity() const { return identity_; }
  uint64_t wallet_count() const { return wallets_; }
  uint64_t file_bytes() const { return size_; }
  // True for a copy made by LoadIntoMemory.
  bool in_memory() const { return in_memory_; }

  // A copy of this table in anonymous memory, with 2 MiB transparent huge pages advised: a
  // random lookup then costs no TLB miss per page of a large mapping, and no page of the table
  // can be dropped under memory pressure and faulted back from disk while serving. Costs the
  // file's size in RSS. Unavailable if the memory cannot be had.
  Result<std::shared_ptr<const WalletTable>> LoadIntoMemory() const;

  // For each wallets[i] with want[i] set, sets values[i] to its stored value bytes (a view of
  // the mapping, valid while this table lives), or to an empty span if the table does not have
  // it. Entries with want[i] unset are left alone. All three spans have the same size.
  void FindAll(std::span<const Address> wallets, std::span<const uint8_t> want,
               std::span<std::span<const uint8_t>> values) const;

  // Starts loading the home slots FindAll of `wallets` will read first, so the memory latency
  // overlaps other work of the request. Reads nothing itself: a second step that also
  // prefetched the records the slots point to had to wait for the slots, and cost more than it
  // saved once the key check mostly skips hashing (docs/BENCHMARKS.md). At most the first
  // kBatch wallets; no effect on results.
  void Prefetch(std::span<const Address> wallets) const;

 private:
  WalletTable() = default;
  // The record at `offset`: its wallet bytes and value, or false if it does not fit the file.
  bool RecordAt(uint64_t offset, const uint8_t*& wallet, std::span<const uint8_t>& value) const;
  // Full probe sequence for one wallet from `slot` (the rare path after a tag collision).
  std::span<const uint8_t> Probe(const Address& wallet, uint64_t hash) const;

  const uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  const uint64_t* slots_ = nullptr;
  uint64_t slot_mask_ = 0;
  const uint8_t* records_ = nullptr;
  uint64_t records_size_ = 0;
  uint64_t txn_id_ = 0;
  uint64_t wallets_ = 0;
  uint64_t seed_ = 0;
  IndexIdentity identity_;
  bool in_memory_ = false;  // base_ is an anonymous mapping, not the file's
};

}  // namespace adserver::store
