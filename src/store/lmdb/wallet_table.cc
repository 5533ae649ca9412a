#include "store/lmdb/wallet_table.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

namespace adserver::store {
namespace {

constexpr char kMagic[8] = {'A', 'D', 'S', 'W', 'T', 'B', 'L', '1'};
constexpr uint64_t kVersion = 1;
constexpr uint64_t kHeaderBytes = 128;
constexpr uint64_t kPage = 4096;
constexpr uint64_t kOffsetBits = 40;
constexpr uint64_t kOffsetMask = (uint64_t{1} << kOffsetBits) - 1;
constexpr size_t kFlushBytes = size_t{4} << 20;
// Wallets whose probes are issued together: enough to overlap the misses of a 50-wallet request.
constexpr size_t kBatch = 64;

struct Header {
  char magic[8];
  uint64_t version;
  uint64_t txn_id;
  uint64_t device;
  uint64_t inode;
  uint64_t wallets;
  uint64_t slot_count;
  uint64_t seed;
  uint64_t records_size;
};
static_assert(sizeof(Header) <= kHeaderBytes);

Status IoError(const char* what, const std::string& path) {
  return UnavailableError(std::string(what) + " " + path + ": " + std::strerror(errno));
}

// Seeded per file: the slot of a wallet cannot be predicted from its address alone.
uint64_t HashWallet(const Address& wallet, uint64_t seed) { return HashAddress(wallet, seed); }

uint64_t TagOf(uint64_t hash) { return hash >> kOffsetBits; }

uint64_t RoundUp(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

Status WriteAll(int fd, const uint8_t* data, size_t size, uint64_t offset,
                const std::string& path) {
  while (size > 0) {
    ssize_t n = pwrite(fd, data, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError("write", path);
    data += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return OkStatus();
}

void PutVarint(uint64_t v, std::vector<uint8_t>& out) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

}  // namespace

// --- builder -----------------------------------------------------------------------------------

Result<std::unique_ptr<WalletTableBuilder>> WalletTableBuilder::Create(const std::string& path,
                                                                       uint64_t expected_wallets) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("create", tmp);
  uint64_t slots = std::bit_ceil(std::max<uint64_t>(64, expected_wallets * 5 / 3 + 1));
  return std::unique_ptr<WalletTableBuilder>(new WalletTableBuilder(path, tmp, fd, slots));
}

WalletTableBuilder::WalletTableBuilder(std::string path, std::string tmp_path, int fd,
                                       uint64_t slot_count)
    : path_(std::move(path)), tmp_path_(std::move(tmp_path)), fd_(fd), slots_(slot_count, 0) {
  seed_ = std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
  buffer_.reserve(kFlushBytes + 4096);
}

WalletTableBuilder::~WalletTableBuilder() {
  if (fd_ >= 0) close(fd_);
  if (!finished_) unlink(tmp_path_.c_str());
}

Status WalletTableBuilder::Add(const Address& wallet, std::span<const uint8_t> value) {
  if ((wallets_ + 1) * 10 > slots_.size() * 9) {
    return InvalidArgumentError("wallet table is full: more wallets than expected");
  }
  uint64_t offset = records_size_ + buffer_.size();
  if (offset + 1 >= kOffsetMask) return InvalidArgumentError("wallet table exceeds 1 TiB");
  const uint64_t hash = HashWallet(wallet, seed_);
  const uint64_t mask = slots_.size() - 1;
  uint64_t i = hash & mask;
  while (slots_[i] != 0) i = (i + 1) & mask;
  slots_[i] = (TagOf(hash) << kOffsetBits) | (offset + 1);
  buffer_.insert(buffer_.end(), wallet.bytes.begin(), wallet.bytes.end());
  PutVarint(value.size(), buffer_);
  buffer_.insert(buffer_.end(), value.begin(), value.end());
  ++wallets_;
  return buffer_.size() >= kFlushBytes ? Flush() : OkStatus();
}

Status WalletTableBuilder::Flush() {
  ADS_RETURN_IF_ERROR(
      WriteAll(fd_, buffer_.data(), buffer_.size(), kHeaderBytes + records_size_, tmp_path_));
  records_size_ += buffer_.size();
  buffer_.clear();
  return OkStatus();
}

Status WalletTableBuilder::Finish(uint64_t txn_id, const IndexIdentity& identity) {
  ADS_RETURN_IF_ERROR(Flush());
  const uint64_t slots_offset = RoundUp(kHeaderBytes + records_size_, kPage);
  ADS_RETURN_IF_ERROR(WriteAll(fd_, reinterpret_cast<const uint8_t*>(slots_.data()),
                               slots_.size() * sizeof(uint64_t), slots_offset, tmp_path_));
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.txn_id = txn_id;
  h.device = identity.device;
  h.inode = identity.inode;
  h.wallets = wallets_;
  h.slot_count = slots_.size();
  h.seed = seed_;
  h.records_size = records_size_;
  uint8_t header[kHeaderBytes] = {};
  std::memcpy(header, &h, sizeof h);
  // The header goes last and only after the rest is on disk: a crash leaves either no table or
  // a file whose header says it is incomplete (all zero magic).
  if (fdatasync(fd_) != 0) return IoError("sync", tmp_path_);
  ADS_RETURN_IF_ERROR(WriteAll(fd_, header, sizeof header, 0, tmp_path_));
  if (fdatasync(fd_) != 0) return IoError("sync", tmp_path_);
  if (rename(tmp_path_.c_str(), path_.c_str()) != 0) return IoError("rename", tmp_path_);
  finished_ = true;
  return OkStatus();
}

// --- reader ------------------------------------------------------------------------------------

Result<std::shared_ptr<const WalletTable>> WalletTable::Open(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFoundError("no wallet table at " + path);
    return IoError("open", path);
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    Status s = IoError("stat", path);
    close(fd);
    return s;
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size < kHeaderBytes) {
    close(fd);
    return InvalidArgumentError("wallet table " + path + " is truncated");
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);  // the mapping keeps the file
  if (map == MAP_FAILED) return IoError("map", path);
  std::shared_ptr<WalletTable> table(new WalletTable());
  table->base_ = static_cast<const uint8_t*>(map);
  table->size_ = size;
  Header h;
  std::memcpy(&h, map, sizeof h);
  const uint64_t slots_offset = RoundUp(kHeaderBytes + h.records_size, kPage);
  const bool valid = std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 && h.version == kVersion &&
                     std::has_single_bit(h.slot_count) && h.records_size < size &&
                     h.slot_count < size / sizeof(uint64_t) &&
                     slots_offset + h.slot_count * sizeof(uint64_t) == size;
  if (!valid) return InvalidArgumentError("wallet table " + path + " is incomplete or foreign");
  // Random point lookups: read-ahead would only evict useful pages.
  madvise(map, size, MADV_RANDOM);
  table->slots_ = reinterpret_cast<const uint64_t*>(table->base_ + slots_offset);
  table->slot_mask_ = h.slot_count - 1;
  table->records_ = table->base_ + kHeaderBytes;
  table->records_size_ = h.records_size;
  table->txn_id_ = h.txn_id;
  table->wallets_ = h.wallets;
  table->seed_ = h.seed;
  table->identity_ = {h.device, h.inode};
  return std::shared_ptr<const WalletTable>(std::move(table));
}

Result<std::shared_ptr<const WalletTable>> WalletTable::LoadIntoMemory() const {
  void* map = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) {
    return UnavailableError("no memory for the wallet table (" + std::to_string(size_) +
                            " bytes): " + std::strerror(errno));
  }
  // Advice only: without THP (or with it off) the copy works on 4 KiB pages.
  madvise(map, size_, MADV_HUGEPAGE);
  // Fault the file's pages in by large batches rather than one page per fault (they are in
  // the page cache after a build; read from disk otherwise). Best effort.
  madvise(const_cast<uint8_t*>(base_), size_, MADV_POPULATE_READ);
  std::memcpy(map, base_, size_);
  mprotect(map, size_, PROT_READ);
  std::shared_ptr<WalletTable> table(new WalletTable());
  table->base_ = static_cast<const uint8_t*>(map);
  table->size_ = size_;
  table->slots_ = reinterpret_cast<const uint64_t*>(
      table->base_ + (reinterpret_cast<const uint8_t*>(slots_) - base_));
  table->slot_mask_ = slot_mask_;
  table->records_ = table->base_ + (records_ - base_);
  table->records_size_ = records_size_;
  table->txn_id_ = txn_id_;
  table->wallets_ = wallets_;
  table->seed_ = seed_;
  table->identity_ = identity_;
  table->in_memory_ = true;
  return std::shared_ptr<const WalletTable>(std::move(table));
}

WalletTable::~WalletTable() {
  if (base_ != nullptr) munmap(const_cast<uint8_t*>(base_), size_);
}

bool WalletTable::RecordAt(uint64_t offset, const uint8_t*& wallet,
                           std::span<const uint8_t>& value) const {
  if (offset + 21 > records_size_) return false;
  const uint8_t* p = records_ + offset;
  wallet = p;
  p += 20;
  const uint8_t* end = records_ + records_size_;
  uint64_t length = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (p == end) return false;
    uint8_t b = *p++;
    length |= uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) {
      if (length > static_cast<uint64_t>(end - p)) return false;
      value = {p, static_cast<size_t>(length)};
      return true;
    }
  }
  return false;
}

std::span<const uint8_t> WalletTable::Probe(const Address& wallet, uint64_t hash) const {
  const uint64_t tag = TagOf(hash);
  uint64_t i = hash & slot_mask_;
  for (uint64_t n = 0; n <= slot_mask_; ++n, i = (i + 1) & slot_mask_) {
    const uint64_t slot = slots_[i];
    if (slot == 0) return {};
    if ((slot >> kOffsetBits) != tag) continue;
    const uint8_t* stored;
    std::span<const uint8_t> value;
    if (RecordAt((slot & kOffsetMask) - 1, stored, value) &&
        std::memcmp(stored, wallet.bytes.data(), 20) == 0) {
      return value;
    }
  }
  return {};
}

void WalletTable::Prefetch(std::span<const Address> wallets) const {
  const size_t n = std::min(kBatch, wallets.size());
  for (size_t k = 0; k < n; ++k) {
    __builtin_prefetch(slots_ + (HashWallet(wallets[k], seed_) & slot_mask_));
  }
}

void WalletTable::FindAll(std::span<const Address> wallets, std::span<const uint8_t> want,
                          std::span<std::span<const uint8_t>> values) const {
  uint64_t hashes[kBatch];
  uint64_t candidates[kBatch];  // record offset + 1 of the first tag match; 0 = none
  for (size_t begin = 0; begin < wallets.size(); begin += kBatch) {
    const size_t n = std::min(kBatch, wallets.size() - begin);
    // 1. Hash every wallet and prefetch its home slot.
    for (size_t k = 0; k < n; ++k) {
      if (!want[begin + k]) continue;
      hashes[k] = HashWallet(wallets[begin + k], seed_);
      __builtin_prefetch(slots_ + (hashes[k] & slot_mask_));
    }
    // 2. Find the first slot with the wallet's tag (or the empty slot ending its run) and
    //    prefetch that record.
    for (size_t k = 0; k < n; ++k) {
      if (!want[begin + k]) continue;
      candidates[k] = 0;
      const uint64_t tag = TagOf(hashes[k]);
      uint64_t i = hashes[k] & slot_mask_;
      for (uint64_t probes = 0; probes <= slot_mask_; ++probes, i = (i + 1) & slot_mask_) {
        const uint64_t slot = slots_[i];
        if (slot == 0) break;
        if ((slot >> kOffsetBits) == tag) {
          candidates[k] = slot & kOffsetMask;
          // A typical record (wallet, length, ~5 interactions) is 40-60 bytes, so it crosses
          // into the next cache line more often than not: fetch both.
          __builtin_prefetch(records_ + candidates[k] - 1);
          __builtin_prefetch(records_ + candidates[k] - 1 + 63);
          break;
        }
      }
    }
    // 3. Confirm the full wallet; a tag collision (1 in 16 M) takes the full probe.
    for (size_t k = 0; k < n; ++k) {
      if (!want[begin + k]) continue;
      std::span<const uint8_t>& out = values[begin + k];
      out = {};
      if (candidates[k] == 0) continue;
      const uint8_t* stored;
      std::span<const uint8_t> value;
      const Address& wallet = wallets[begin + k];
      if (RecordAt(candidates[k] - 1, stored, value) &&
          std::memcmp(stored, wallet.bytes.data(), 20) == 0) {
        out = value;
      } else {
        out = Probe(wallet, hashes[k]);
      }
    }
  }
}

}  // namespace adserver::store
