#include "ingest/bulk_import.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sodium.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include "common/address.h"
#include "common/check.h"
#include "ingest/detail/input_reader.h"

namespace adserver::ingest {
namespace {

// BLAKE2b-256 of the decompressed content identifies a file in the ledger (faster than SHA-256).
constexpr size_t kDigestBytes = 32;
constexpr const char* kRoles[] = {"wallet", "contract", "project",   "chain", "time",
                                  "status", "tx",       "log_index", "block"};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

constexpr std::array<int8_t, 256> kHexTable = [] {
  std::array<int8_t, 256> t{};
  t.fill(-1);
  for (int c = '0'; c <= '9'; ++c) t[size_t(c)] = static_cast<int8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) t[size_t(c)] = static_cast<int8_t>(c - 'a' + 10);
  for (int c = 'A'; c <= 'F'; ++c) t[size_t(c)] = static_cast<int8_t>(c - 'A' + 10);
  return t;
}();

int HexValue(char c) { return kHexTable[static_cast<uint8_t>(c)]; }

// A decimal (optionally quoted) into `out`; false when it is not one.
bool ParseUint(std::string_view t, uint64_t& out) {
  if (t.size() >= 2 && t[0] == '"' && t.back() == '"') t = t.substr(1, t.size() - 2);
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  return ec == std::errc() && end == t.data() + t.size() && !t.empty();
}

std::optional<Address> Hex40(std::string_view hex) {
  Address a;
  for (size_t i = 0; i < 20; ++i) {
    int hi = HexValue(hex[2 * i]), lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    a.bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return a;
}

// Which columns fill which role, as indexes into a row's fields.
struct Plan {
  std::string shape;
  std::vector<int> wallets;
  std::vector<int> topic_wallets;  // 32-byte words that hold an address only sometimes
  int contract = -1, project = -1, chain = -1, time = -1, status = -1;
  int tx = -1, log_index = -1, block = -1;  // optional: conversions
};

int Find(const std::vector<std::string>& header, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto it = std::find(header.begin(), header.end(), n);
    if (it != header.end()) return static_cast<int>(it - header.begin());
  }
  return -1;
}

bool Has(const std::vector<std::string>& header, const char* name) {
  return Find(header, {name}) >= 0;
}

// Recognises the known export shapes by their column names (lower-cased).
void DetectShape(const std::vector<std::string>& h, Plan& p) {
  auto wallets = [&](std::initializer_list<const char*> names) {
    for (const char* n : names) {
      if (int c = Find(h, {n}); c >= 0) p.wallets.push_back(c);
    }
  };
  auto topics = [&] {
    for (const char* n : {"topic1", "topic2"}) {
      if (int c = Find(h, {n}); c >= 0) p.topic_wallets.push_back(c);
    }
  };
  p.time = Find(h, {"timestamp", "block_timestamp", "block_time", "evt_block_time", "time"});
  p.chain = Find(h, {"chainid", "chain_id"});
  p.status = Find(h, {"receipt_status", "success", "status"});
  if (Has(h, "wallet")) {
    p.shape = "adserver";
    wallets({"wallet"});
    p.contract = Find(h, {"contract"});
    p.project = Find(h, {"project"});
  } else if (Has(h, "token_address")) {
    p.shape = "bigquery.token_transfers";
    p.contract = Find(h, {"token_address"});
    wallets({"from_address", "to_address"});
  } else if (Has(h, "erc20") || Has(h, "erc721")) {
    p.shape = "cryo.transfers";
    p.contract = Find(h, {"erc20", "erc721"});
    wallets({"from_address", "to_address"});
  } else if (Has(h, "from_address") && Has(h, "to_address")) {
    p.shape = p.time >= 0 ? "bigquery.transactions" : "cryo.transactions";
    p.contract = Find(h, {"to_address"});
    wallets({"from_address"});
  } else if (Has(h, "address") && (Has(h, "topic0") || Has(h, "topics"))) {
    p.shape = p.time >= 0 ? "bigquery.logs" : "cryo.logs";
    p.contract = Find(h, {"address"});
    topics();
  } else if (Has(h, "contract_address")) {
    p.contract = Find(h, {"contract_address"});
    if (Has(h, "from") && Has(h, "to")) {
      p.shape = "dune.transfers";
      wallets({"from", "to"});
    } else {
      p.shape = "dune.logs";
      wallets({"tx_from"});
      if (p.wallets.empty()) topics();
    }
  } else if (Has(h, "from") && Has(h, "to")) {
    p.shape = "dune.transactions";
    p.contract = Find(h, {"to"});
    wallets({"from"});
  }
  if (p.shape.empty() || p.shape == "adserver") {
    if (int c = Find(h, {"project"}); c >= 0 && p.project < 0) p.project = c;
  }
  p.tx = Find(h, {"transaction_hash", "tx_hash", "txhash", "evt_tx_hash"});
  if (p.tx < 0 && p.shape.find("transactions") != std::string::npos) p.tx = Find(h, {"hash"});
  p.log_index = Find(h, {"log_index", "logindex", "evt_index"});
  p.block = Find(h, {"block_number", "blocknumber", "evt_block_number"});
}

Status ApplyMapping(const std::vector<std::string>& h, const ColumnMapping& m, Plan& p) {
  for (const auto& [role, columns] : m.roles) {
    std::vector<int> idx;
    for (const std::string& c : columns) {
      int i = Find(h, {Lower(c).c_str()});
      if (i < 0) return InvalidFieldError("map", "mapped column " + c + " is not in the header");
      idx.push_back(i);
    }
    if (!p.shape.empty() && p.shape.find("+mapping") == std::string::npos) p.shape += "+mapping";
    if (p.shape.empty()) p.shape = "mapping";
    if (role == "wallet") {
      p.wallets = idx;
      p.topic_wallets.clear();
    } else if (role == "contract") {
      p.contract = idx[0];
    } else if (role == "project") {
      p.project = idx[0];
    } else if (role == "chain") {
      p.chain = idx[0];
    } else if (role == "time") {
      p.time = idx[0];
    } else if (role == "status") {
      p.status = idx[0];
    } else if (role == "tx") {
      p.tx = idx[0];
    } else if (role == "log_index") {
      p.log_index = idx[0];
    } else if (role == "block") {
      p.block = idx[0];
    }
  }
  if (p.wallets.empty() && p.topic_wallets.empty()) {
    return InvalidFieldError(
        "map", "cannot tell the wallet column; map it (--map or ?map=) wallet=COLUMN");
  }
  if (p.contract < 0 && p.project < 0) {
    return InvalidFieldError("map",
                             "cannot tell the contract column; map it (--map or ?map=) "
                             "contract=COLUMN or project=COLUMN");
  }
  return OkStatus();
}

struct Key {
  Address wallet;
  uint32_t project;
  uint32_t chain;
  // No padding: one inlined 28-byte compare (the defaulted == calls memcmp for the wallet).
  bool operator==(const Key& o) const { return std::memcmp(this, &o, sizeof(Key)) == 0; }
};
static_assert(sizeof(Key) == 28);
struct KeyHash {
  size_t operator()(const Key& k) const noexcept {
    uint64_t h;
    std::memcpy(&h, k.wallet.bytes.data() + 4, sizeof h);
    h ^= (uint64_t{k.project} << 32 | k.chain) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};
struct ContractRefHashForImport {
  size_t operator()(const store::ContractRef& c) const noexcept {
    return AddressHash{}(c.address) ^ static_cast<size_t>(c.chain_id);
  }
};

// Open-addressing (linear probing) map Key -> (latest day, count): the import's hot path. With
// millions of keys every probe is a cache (and TLB) miss, so inserts are buffered and issued in
// batches whose slots are prefetched first: the misses overlap instead of queueing.
class AggMap {
 public:
  struct Slot {
    Key key;
    uint32_t day = 0;
    uint32_t count = 0;  // 0 = empty slot
  };

  AggMap() { slots_.Allocate(1 << 16); }

  // Counts one interaction. Buffered: Flush() before reading.
  void Add(const Key& k, uint32_t day) {
    pending_[pending_size_++] = {k, day};
    if (pending_size_ == kBatch) Flush();
  }
  void Flush() {
    Reserve(size_ + pending_size_);
    const size_t mask = slots_.size - 1;
    size_t at[kBatch];
    for (size_t i = 0; i < pending_size_; ++i) {
      at[i] = KeyHash{}(pending_[i].key) & mask;
      Prefetch(at[i]);
    }
    for (size_t i = 0; i < pending_size_; ++i) {
      Slot& s = Find(pending_[i].key, at[i]);
      if (s.count++ == 0) {
        s.key = pending_[i].key;
        ++size_;
      }
      s.day = std::max(s.day, pending_[i].day);
    }
    pending_size_ = 0;
  }
  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size; }
  const Slot& slot(size_t i) const { return slots_.data[i]; }

 private:
  static constexpr size_t kBatch = 32;
  struct Pending {
    Key key;
    uint32_t day;
  };

  // Zero-filled slots straight from mmap (no memset), on 2 MiB transparent huge pages where
  // the kernel allows it: random probes over hundreds of MB would otherwise miss the TLB on
  // nearly every insert, and faulting 4 KiB pages in costs more than the zeroing.
  class Table {
   public:
    Table() = default;
    Table(Table&& o) noexcept
        : base_(std::exchange(o.base_, nullptr)),
          mapped_(std::exchange(o.mapped_, 0)),
          data(std::exchange(o.data, nullptr)),
          size(std::exchange(o.size, 0)) {}
    Table& operator=(Table&& o) noexcept {
      if (this != &o) {
        Release();
        base_ = std::exchange(o.base_, nullptr);
        mapped_ = std::exchange(o.mapped_, 0);
        data = std::exchange(o.data, nullptr);
        size = std::exchange(o.size, 0);
      }
      return *this;
    }
    ~Table() { Release(); }

    void Allocate(size_t n) {
      Release();
      constexpr size_t kHugePage = size_t{2} << 20;
      size_t bytes = n * sizeof(Slot);
      mapped_ = bytes >= kHugePage ? bytes + kHugePage : bytes;
      void* p =
          ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      ADS_CHECK(p != MAP_FAILED) << "out of memory for " << n << " import slots";
      base_ = p;
      uintptr_t start = reinterpret_cast<uintptr_t>(p);
      if (bytes >= kHugePage) {
        start = (start + kHugePage - 1) & ~(kHugePage - 1);
        ::madvise(reinterpret_cast<void*>(start), bytes, MADV_HUGEPAGE);
      }
      data = reinterpret_cast<Slot*>(start);
      size = n;
    }

   private:
    void Release() {
      if (base_ != nullptr) ::munmap(base_, mapped_);
      base_ = nullptr;
    }
    void* base_ = nullptr;
    size_t mapped_ = 0;

   public:
    Slot* data = nullptr;
    size_t size = 0;
  };

  void Prefetch(size_t i) const {
    const char* p = reinterpret_cast<const char*>(&slots_.data[i]);
    __builtin_prefetch(p, 1);
    __builtin_prefetch(p + sizeof(Slot) - 1, 1);
  }
  // The slot holding `k`, or the empty slot where it goes.
  Slot& Find(const Key& k, size_t i) {
    const size_t mask = slots_.size - 1;
    for (;; i = (i + 1) & mask) {
      Slot& s = slots_.data[i];
      if (s.count == 0 || s.key == k) return s;
    }
  }
  // Keeps the load factor at most 0.7 with `n` keys.
  void Reserve(size_t n) {
    if (n * 10 <= slots_.size * 7) return;
    size_t capacity = slots_.size;
    while (n * 10 > capacity * 7) capacity *= 2;
    Table old = std::move(slots_);
    slots_.Allocate(capacity);
    const size_t mask = slots_.size - 1;
    size_t at[kBatch];
    const Slot* batch[kBatch];
    size_t k = 0;
    auto flush = [&] {
      for (size_t j = 0; j < k; ++j) Find(batch[j]->key, at[j]) = *batch[j];
      k = 0;
    };
    for (size_t i = 0; i < old.size; ++i) {
      const Slot& s = old.data[i];
      if (s.count == 0) continue;
      at[k] = KeyHash{}(s.key) & mask;
      Prefetch(at[k]);
      batch[k++] = &s;
      if (k == kBatch) flush();
    }
    flush();
  }

  Table slots_;
  size_t size_ = 0;
  Pending pending_[kBatch];
  size_t pending_size_ = 0;
};

// One aggregated (wallet, project, chain) with the whole key as big-endian integers, so that
// integer order is byte order and sorting never goes back to the table.
struct SortedEntry {
  uint64_t head, middle;  // wallet bytes 0-7, 8-15
  uint32_t tail;          // wallet bytes 16-19
  uint32_t project, chain, day, count;
  bool operator<(const SortedEntry& o) const {
    return std::tie(head, middle, tail, project, chain) <
           std::tie(o.head, o.middle, o.tail, o.project, o.chain);
  }
  Address wallet() const {
    Address a;
    uint64_t h = __builtin_bswap64(head), m = __builtin_bswap64(middle);
    uint32_t t = __builtin_bswap32(tail);
    std::memcpy(a.bytes.data(), &h, 8);
    std::memcpy(a.bytes.data() + 8, &m, 8);
    std::memcpy(a.bytes.data() + 16, &t, 4);
    return a;
  }
};

// The entries of `map` in (wallet, project, chain) order: the LMDB index is keyed by wallet, so
// sorted batches are written (and re-sorted by the store) in one forward pass. One counting-sort
// pass on the top 16 wallet bits, then a small sort per bucket (wallets are hashes: buckets stay
// small; a skewed input only makes some buckets bigger, never wrong).
std::vector<SortedEntry> SortedEntries(const AggMap& map) {
  using Item = SortedEntry;
  auto item_of = [&](size_t i) {
    const Key& k = map.slot(i).key;
    Item item;
    std::memcpy(&item.head, k.wallet.bytes.data(), 8);
    std::memcpy(&item.middle, k.wallet.bytes.data() + 8, 8);
    std::memcpy(&item.tail, k.wallet.bytes.data() + 16, 4);
    item.head = __builtin_bswap64(item.head);
    item.middle = __builtin_bswap64(item.middle);
    item.tail = __builtin_bswap32(item.tail);
    item.project = k.project;
    item.chain = k.chain;
    item.day = map.slot(i).day;
    item.count = map.slot(i).count;
    return item;
  };
  // One sequential pass over the (large, sparse) table, then the counting sort on the
  // compact items.
  std::vector<Item> unsorted;
  unsorted.reserve(map.size());
  for (size_t i = 0; i < map.capacity(); ++i) {
    if (map.slot(i).count != 0) unsorted.push_back(item_of(i));
  }
  constexpr size_t kBuckets = 1 << 16;
  std::vector<uint32_t> start(kBuckets + 1, 0);
  for (const Item& item : unsorted) ++start[(item.head >> 48) + 1];
  for (size_t b = 0; b < kBuckets; ++b) start[b + 1] += start[b];
  std::vector<Item> items(unsorted.size());
  std::vector<uint32_t> next(start.begin(), start.end() - 1);
  for (const Item& item : unsorted) items[next[item.head >> 48]++] = item;
  unsorted = {};
  for (size_t b = 0; b < kBuckets; ++b) {
    std::sort(items.begin() + start[b], items.begin() + start[b + 1]);
  }
  return items;
}

// One import in progress.
class Importer {
 public:
  Importer(store::InventoryStore& store, store::ActivityStore& activity,
           const BulkImportOptions& options, uint32_t today)
      : store_(store), activity_(activity), options_(options), today_(today) {}

  Status LoadRegistry() {
    ADS_ASSIGN_OR_RETURN(std::vector<store::ProjectRecord> projects, store_.ListProjects());
    for (const store::ProjectRecord& p : projects) {
      by_slug_.emplace(p.slug, p.id);
      for (const store::ContractRef& c : p.contracts) by_contract_.emplace(c, p.id);
    }
    return OkStatus();
  }

  // Header of a CSV file or the keys of the first JSON object.
  Status SetHeader(std::vector<std::string> header) {
    for (std::string& h : header) h = Lower(h);
    header_ = std::move(header);
    DetectShape(header_, plan_);
    ADS_RETURN_IF_ERROR(ApplyMapping(header_, options_.mapping, plan_));
    summary_.shape = plan_.shape;
    return OkStatus();
  }
  const std::vector<std::string>& header() const { return header_; }

  void Row(const std::vector<std::string_view>& f, uint64_t line) {
    ++summary_.rows;
    auto field = [&](int i) { return i >= 0 && size_t(i) < f.size() ? f[size_t(i)] : ""; };
    std::string_view status = field(plan_.status);
    if (status == "0" || status == "false" || status == "False") {
      ++summary_.skipped_failed;
      return;
    }
    int64_t chain = options_.chain_id;
    if (plan_.chain >= 0) {
      std::string_view c = field(plan_.chain);
      auto [p, ec] = std::from_chars(c.data(), c.data() + c.size(), chain);
      if (ec != std::errc() || chain <= 0) return Reject(line, "invalid chain id");
    }
    std::optional<store::Id> project =
        ResolveProject(field(plan_.contract), field(plan_.project), chain, line);
    if (!project) return;
    uint32_t day = today_;
    if (plan_.time >= 0) {
      std::optional<uint32_t> d = ParseDay(field(plan_.time));
      if (!d) return Reject(line, "invalid timestamp");
      day = *d;
    }
    size_t added = 0;
    for (int c : plan_.wallets) {
      std::string_view w = field(c);
      if (w.empty()) continue;
      std::optional<Address> a = ParseAnyAddress(w);
      if (!a) return Reject(line, "invalid wallet address in " + header_[size_t(c)]);
      added += Add(*a, *project, chain, day);
    }
    for (int c : plan_.topic_wallets) {
      std::optional<Address> a = ParseAnyAddress(field(c));
      if (a) added += Add(*a, *project, chain, day);
    }
    summary_.interactions += added;
    if (options_.transactions != nullptr && plan_.tx >= 0 && plan_.time >= 0 && added > 0) {
      CollectTransaction(f, *project, chain);
    }
  }

  // Hands the collected transactions to the sink (before Write(); see TransactionSink).
  Status DeliverTransactions() {
    if (options_.transactions == nullptr || transactions_.empty()) return OkStatus();
    ADS_RETURN_IF_ERROR(options_.transactions->OnImported(transactions_));
    summary_.transactions = transactions_.size();
    transactions_ = {};
    return OkStatus();
  }

  void Reject(uint64_t line, std::string message) {
    ++summary_.rejected;
    if (summary_.errors.size() < kMaxReportedErrors) {
      summary_.errors.push_back({static_cast<size_t>(line), std::move(message)});
    }
  }

  Status Write() {
    agg_.Flush();
    std::vector<SortedEntry> entries = SortedEntries(agg_);
    agg_ = AggMap();  // frees the table before the store allocates
    std::vector<store::ActivityRecord> batch;
    batch.reserve(std::min(entries.size(), options_.rows_per_batch));
    for (const SortedEntry& e : entries) {
      batch.push_back({.wallet = e.wallet(),
                       .project_id = e.project,
                       .chain_id = e.chain,
                       .last_seen = int64_t{e.day} * 86400,
                       .count = e.count});
      if (batch.size() == options_.rows_per_batch) {
        ADS_RETURN_IF_ERROR(activity_.RecordActivity(batch));
        batch.clear();
      }
    }
    if (!batch.empty()) ADS_RETURN_IF_ERROR(activity_.RecordActivity(batch));
    return OkStatus();
  }

  BulkImportSummary& summary() { return summary_; }

 private:
  std::optional<store::Id> ResolveProject(std::string_view contract, std::string_view slug,
                                          int64_t chain, uint64_t line) {
    if (plan_.project >= 0 && !slug.empty()) {
      auto it = by_slug_.find(std::string(slug));
      if (it != by_slug_.end()) return it->second;
      ++summary_.unknown_contract;
      return std::nullopt;
    }
    if (contract.empty() || contract == "null") {  // contract creation: no target
      ++summary_.unknown_contract;
      return std::nullopt;
    }
    std::optional<Address> a = ParseAnyAddress(contract);
    if (!a) {
      Reject(line, "invalid contract address");
      return std::nullopt;
    }
    std::optional<store::Id> project = LookUpContract(chain, *a);
    if (!project) ++summary_.unknown_contract;
    return project;
  }

  // The registry's project of a contract, through a direct-mapped cache: exports repeat the
  // same few contracts (known or not), and a hit costs one compare instead of a hash map probe.
  std::optional<store::Id> LookUpContract(int64_t chain, const Address& address) {
    CachedContract& c = contract_cache_[(AddressHash{}(address) ^ static_cast<size_t>(chain)) &
                                        (contract_cache_.size() - 1)];
    if (c.valid && c.chain == chain && c.address == address) return c.project;
    auto it = by_contract_.find(store::ContractRef{chain, address});
    c = {.valid = true,
         .chain = chain,
         .address = address,
         .project = it == by_contract_.end() ? std::nullopt : std::optional(it->second)};
    return c.project;
  }

  // The row's transaction, once per wallet column (each is a party to it), when the sink wants
  // it. A row whose hash does not parse is counted (invalid_tx_hashes) and not attributed.
  void CollectTransaction(const std::vector<std::string_view>& f, store::Id project,
                          int64_t chain) {
    auto field = [&](int i) { return i >= 0 && size_t(i) < f.size() ? f[size_t(i)] : ""; };
    std::optional<int64_t> time = ParseSeconds(field(plan_.time));
    if (!time || !options_.transactions->Wants(project, *time)) return;
    std::optional<chain::Hash32> tx = ParseTxHash(field(plan_.tx));
    if (!tx) {
      ++summary_.invalid_tx_hashes;
      return;
    }
    std::optional<uint64_t> log_index;
    if (uint64_t v = 0; plan_.log_index >= 0 && ParseUint(field(plan_.log_index), v)) {
      log_index = v;
    }
    uint64_t block = 0;
    if (plan_.block >= 0) ParseUint(field(plan_.block), block);
    auto collect = [&](const Address& wallet) {
      if (wallet == Address{}) return;
      if (transactions_.size() >= kMaxImportTransactions) {
        ++summary_.transactions_dropped;
        return;
      }
      transactions_.push_back({.wallet = wallet,
                               .project_id = project,
                               .chain_id = chain,
                               .tx_hash = *tx,
                               .log_index = log_index,
                               .block_number = block,
                               .block_time = *time});
    };
    for (int c : plan_.wallets) {
      if (std::optional<Address> a = ParseAnyAddress(field(c))) collect(*a);
    }
    for (int c : plan_.topic_wallets) {
      if (std::optional<Address> a = ParseAnyAddress(field(c))) collect(*a);
    }
  }

  size_t Add(const Address& wallet, store::Id project, int64_t chain, uint32_t day) {
    if (wallet == Address{}) return 0;  // mints and burns
    agg_.Add(Key{wallet, static_cast<uint32_t>(project), static_cast<uint32_t>(chain)}, day);
    return 1;
  }

  store::InventoryStore& store_;
  store::ActivityStore& activity_;
  const BulkImportOptions& options_;
  uint32_t today_;
  std::vector<std::string> header_;
  Plan plan_;
  std::unordered_map<std::string, store::Id> by_slug_;
  std::unordered_map<store::ContractRef, store::Id, ContractRefHashForImport> by_contract_;
  struct CachedContract {
    bool valid = false;
    int64_t chain = 0;
    Address address;
    std::optional<store::Id> project;
  };
  std::vector<CachedContract> contract_cache_ = std::vector<CachedContract>(4096);
  AggMap agg_;
  BulkImportSummary summary_;
  std::vector<chain::ChainInteraction> transactions_;
};

// A JSON object's values as text, in `header` order (numbers and booleans as written;
// "topics": [..] fills topic0..topic3).
bool JsonFields(simdjson::dom::element obj, const std::vector<std::string>& header,
                std::deque<std::string>& storage, std::vector<std::string_view>& fields) {
  simdjson::dom::object object;
  if (obj.get_object().get(object) != simdjson::SUCCESS) return false;
  storage.assign(header.size(), std::string());
  for (auto [key, value] : object) {
    std::string k = Lower(key);
    simdjson::dom::array topics;
    if (k == "topics" && value.get_array().get(topics) == simdjson::SUCCESS) {
      size_t t = 0;
      for (simdjson::dom::element topic : topics) {
        auto it = std::find(header.begin(), header.end(), "topic" + std::to_string(t++));
        std::string_view s;
        if (it != header.end() && topic.get_string().get(s) == simdjson::SUCCESS) {
          storage[size_t(it - header.begin())] = std::string(s);
        }
      }
      continue;
    }
    auto it = std::find(header.begin(), header.end(), k);
    if (it == header.end()) continue;
    std::string& out = storage[size_t(it - header.begin())];
    std::string_view s;
    if (value.get_string().get(s) == simdjson::SUCCESS) {
      out = s;
    } else if (value.is_null()) {
      out.clear();
    } else {
      out = simdjson::minify(value);
    }
  }
  fields.assign(storage.begin(), storage.end());
  return true;
}

std::vector<std::string> JsonHeader(simdjson::dom::element obj) {
  std::vector<std::string> header;
  simdjson::dom::object object;
  if (obj.get_object().get(object) != simdjson::SUCCESS) return header;
  for (auto [key, value] : object) {
    if (Lower(key) == "topics") {
      for (int t = 0; t < 4; ++t) header.push_back("topic" + std::to_string(t));
    } else {
      header.emplace_back(key);
    }
  }
  return header;
}

bool InLedger(const std::string& path, const std::string& digest) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > digest.size() && line[digest.size()] == ' ' &&
        line.compare(0, digest.size(), digest) == 0) {
      return true;
    }
  }
  return false;
}

Status RememberInLedger(const std::string& path, const std::string& digest, std::string_view name,
                        uint64_t rows) {
  std::ofstream out(path, std::ios::app);
  out << digest << ' ' << rows << ' ' << name << '\n';
  out.flush();
  if (!out) return UnavailableError("cannot write import ledger " + path);
  return OkStatus();
}

// An exclusive advisory lock (flock) on the ledger file, held while an import checks the
// ledger, writes and records itself: concurrent imports of the same content, from threads of
// one server or from the CLI next to it, write once.
class LedgerLock {
 public:
  static Result<LedgerLock> Acquire(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return UnavailableError("cannot open import ledger " + path);
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        ::close(fd);
        return UnavailableError("cannot lock import ledger " + path);
      }
    }
    return LedgerLock(fd);
  }
  LedgerLock(LedgerLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  LedgerLock& operator=(LedgerLock&&) = delete;
  ~LedgerLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }

 private:
  explicit LedgerLock(int fd) : fd_(fd) {}
  int fd_;
};

Status ReadRows(detail::LineReader& reader, Importer& importer, const BulkImportOptions& options) {
  simdjson::dom::parser parser;
  std::vector<std::string_view> fields;
  std::deque<std::string> scratch;
  bool json = false, have_header = false;
  auto last_progress = std::chrono::steady_clock::now();
  std::string_view line;
  while (true) {
    ADS_ASSIGN_OR_RETURN(bool more, reader.Next(line));
    if (!more) break;
    if (line.empty()) continue;
    if (!have_header) {
      json = line.front() == '{';
      std::vector<std::string> header;
      if (json) {
        simdjson::dom::element obj;
        if (parser.parse(line.data(), line.size()).get(obj) != simdjson::SUCCESS ||
            !obj.is_object()) {
          return InvalidArgumentError("line " + std::to_string(reader.line()) +
                                      " is not a JSON object");
        }
        header = JsonHeader(obj);
        // adserver's NDJSON names a project or a contract per line: know both from line 1.
        if (std::find(header.begin(), header.end(), "wallet") != header.end()) {
          for (const char* k : {"project", "contract", "chainId", "timestamp"}) {
            if (std::find(header.begin(), header.end(), k) == header.end()) header.push_back(k);
          }
        }
      } else {
        detail::SplitCsvLine(line, fields, scratch);
        header.assign(fields.begin(), fields.end());
      }
      ADS_RETURN_IF_ERROR(importer.SetHeader(std::move(header)));
      have_header = true;
      if (!json) continue;
    }
    if (json) {
      simdjson::dom::element obj;
      if (parser.parse(line.data(), line.size()).get(obj) != simdjson::SUCCESS ||
          !JsonFields(obj, importer.header(), scratch, fields)) {
        importer.summary().rows++;
        importer.Reject(reader.line(), "not a JSON object");
        continue;
      }
    } else {
      detail::SplitCsvLine(line, fields, scratch);
      if (fields.size() != importer.header().size()) {
        importer.summary().rows++;
        importer.Reject(reader.line(), "expected " + std::to_string(importer.header().size()) +
                                           " columns, got " + std::to_string(fields.size()));
        continue;
      }
    }
    importer.Row(fields, reader.line());
    if (options.progress && (importer.summary().rows & 0xFFFF) == 0) {
      auto now = std::chrono::steady_clock::now();
      if (now - last_progress > std::chrono::milliseconds(500)) {
        last_progress = now;
        options.progress(importer.summary().rows, reader.bytes_read(), reader.total());
      }
    }
  }
  if (!have_header) return InvalidArgumentError("empty input");
  return OkStatus();
}

}  // namespace

Status AddMapping(std::string_view spec, ColumnMapping& mapping) {
  size_t eq = spec.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == spec.size()) {
    return InvalidArgumentError("mapping must look like role=column[,column]");
  }
  std::string role = Lower(spec.substr(0, eq));
  if (std::find(std::begin(kRoles), std::end(kRoles), role) == std::end(kRoles)) {
    return InvalidArgumentError("unknown mapping role " + role +
                                " (wallet, contract, project, chain, time, status, tx, log_index, "
                                "block)");
  }
  std::vector<std::string>& columns = mapping.roles[role];
  columns.clear();
  std::string_view rest = spec.substr(eq + 1);
  while (!rest.empty()) {
    size_t comma = std::min(rest.find(','), rest.size());
    if (comma > 0) columns.emplace_back(rest.substr(0, comma));
    rest.remove_prefix(std::min(comma + 1, rest.size()));
  }
  return OkStatus();
}

std::optional<Address> ParseAnyAddress(std::string_view t) {
  if (t.size() >= 2 && t[0] == '"' && t.back() == '"') t = t.substr(1, t.size() - 2);
  if (t.size() == 42 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) return Hex40(t.substr(2));
  if (t.size() == 42 && t[0] == '\\' && t[1] == 'x') return Hex40(t.substr(2));
  if (t.size() == 66 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    // A 32-byte word holds an address only if its first 12 bytes are zero.
    if (t.substr(2, 24).find_first_not_of('0') != std::string_view::npos) return std::nullopt;
    return Hex40(t.substr(26));
  }
  return std::nullopt;
}

std::optional<int64_t> ParseSeconds(std::string_view t) {
  if (t.size() >= 2 && t[0] == '"' && t.back() == '"') t = t.substr(1, t.size() - 2);
  if (!t.empty() && t.find_first_not_of("0123456789") == std::string_view::npos) {
    int64_t seconds = 0;
    if (std::from_chars(t.data(), t.data() + t.size(), seconds).ec != std::errc()) {
      return std::nullopt;
    }
    return seconds > 100'000'000'000 ? seconds / 1000 : seconds;
  }
  if (t.size() > 10 && t[10] == 'T') {
    Result<int64_t> parsed = ParseRfc3339(t);
    if (!parsed.ok()) return std::nullopt;
    return *parsed;
  }
  std::optional<uint32_t> day = ParseDay(t);
  if (!day) return std::nullopt;
  int64_t seconds = int64_t{*day} * 86400;
  if (t.size() >= 19) {  // " HH:MM:SS"
    int h = 0, m = 0, s = 0;
    if (t[13] != ':' || t[16] != ':' ||
        std::from_chars(t.data() + 11, t.data() + 13, h).ec != std::errc() ||
        std::from_chars(t.data() + 14, t.data() + 16, m).ec != std::errc() ||
        std::from_chars(t.data() + 17, t.data() + 19, s).ec != std::errc() || h > 23 || m > 59 ||
        s > 60) {
      return std::nullopt;
    }
    seconds += h * 3600 + m * 60 + s;
  }
  return seconds;
}

std::optional<chain::Hash32> ParseTxHash(std::string_view t) {
  if (t.size() >= 2 && t[0] == '"' && t.back() == '"') t = t.substr(1, t.size() - 2);
  if (t.size() != 66 ||
      !((t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) || (t[0] == '\\' && t[1] == 'x'))) {
    return std::nullopt;
  }
  chain::Hash32 h;
  for (size_t i = 0; i < 32; ++i) {
    int hi = HexValue(t[2 + 2 * i]), lo = HexValue(t[3 + 2 * i]);
    if (hi < 0 || lo < 0) return std::nullopt;
    h.bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return h;
}

std::optional<uint32_t> ParseDay(std::string_view t) {
  if (t.size() >= 2 && t[0] == '"' && t.back() == '"') t = t.substr(1, t.size() - 2);
  if (!t.empty() && t.find_first_not_of("0123456789") == std::string_view::npos) {
    int64_t seconds = 0;
    std::from_chars(t.data(), t.data() + t.size(), seconds);
    if (seconds > 100'000'000'000) seconds /= 1000;  // milliseconds
    return static_cast<uint32_t>(seconds / 86400);
  }
  // YYYY-MM-DD followed by 'T' or ' ' and a time (the day is all the index keeps).
  if (t.size() < 10 || t[4] != '-' || t[7] != '-') return std::nullopt;
  int y = 0, m = 0, d = 0;
  if (std::from_chars(t.data(), t.data() + 4, y).ec != std::errc() ||
      std::from_chars(t.data() + 5, t.data() + 7, m).ec != std::errc() ||
      std::from_chars(t.data() + 8, t.data() + 10, d).ec != std::errc()) {
    return std::nullopt;
  }
  if (y < 1970 || m < 1 || m > 12 || d < 1 || d > 31) return std::nullopt;
  if (t.size() > 10 && t[10] != 'T' && t[10] != ' ') return std::nullopt;
  // Days from civil (Howard Hinnant's algorithm).
  y -= m <= 2;
  const int era = y / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<uint32_t>(era * 146097 + doe - 719468);
}

Status WithLedgerLocked(const std::string& ledger_path, const std::function<Status()>& copy) {
  ADS_ASSIGN_OR_RETURN(LedgerLock lock, LedgerLock::Acquire(ledger_path));
  return copy();
}

Result<bool> WriteOnce(const std::string& ledger_path, const std::string& digest,
                       std::string_view name, bool force,
                       const std::function<Result<uint64_t>()>& write) {
  if (ledger_path.empty()) {
    ADS_RETURN_IF_ERROR(write().status());
    return true;
  }
  ADS_ASSIGN_OR_RETURN(LedgerLock lock, LedgerLock::Acquire(ledger_path));
  if (!force && InLedger(ledger_path, digest)) return false;
  ADS_ASSIGN_OR_RETURN(uint64_t rows, write());
  ADS_RETURN_IF_ERROR(RememberInLedger(ledger_path, digest, name, rows));
  return true;
}

std::string ContentDigestHex(std::string_view content) {
  uint8_t digest[kDigestBytes];
  crypto_generichash(digest, sizeof digest, reinterpret_cast<const uint8_t*>(content.data()),
                     content.size(), nullptr, 0);
  return HexEncode(digest, sizeof digest);
}

bool IsGzipContent(std::string_view content) { return detail::IsGzip(content); }

Result<std::string> DecompressedPrefix(std::string_view content, size_t size) {
  std::unique_ptr<detail::ByteSource> source = detail::MemorySource(content);
  std::string out(size, '\0');
  size_t filled = 0;
  while (filled < size) {
    ADS_ASSIGN_OR_RETURN(size_t n, source->Read(out.data() + filled, size - filled));
    if (n == 0) break;
    filled += n;
  }
  out.resize(filled);
  return out;
}

Result<std::string> Decompress(std::string_view content, uint64_t max_bytes) {
  std::unique_ptr<detail::ByteSource> source = detail::MemorySource(content);
  std::string out;
  while (true) {
    size_t old = out.size();
    out.resize(old + (1 << 20));
    ADS_ASSIGN_OR_RETURN(size_t n, source->Read(out.data() + old, 1 << 20));
    out.resize(old + n);
    if (n == 0) return out;
    if (max_bytes != 0 && out.size() > max_bytes) {
      return InvalidFieldError("body", "decompressed input exceeds the limit of " +
                                           std::to_string(max_bytes) + " bytes");
    }
  }
}

Result<std::string> DecompressedDigestHex(std::string_view content, uint64_t max_bytes) {
  std::unique_ptr<detail::ByteSource> source = detail::MemorySource(content);
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, kDigestBytes);
  std::vector<char> chunk(1 << 20);
  uint64_t total = 0;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(size_t n, source->Read(chunk.data(), chunk.size()));
    if (n == 0) break;
    total += n;
    if (max_bytes != 0 && total > max_bytes) {
      return InvalidFieldError("body", "decompressed input exceeds the limit of " +
                                           std::to_string(max_bytes) + " bytes");
    }
    crypto_generichash_update(&state, reinterpret_cast<const uint8_t*>(chunk.data()), n);
  }
  uint8_t digest[kDigestBytes];
  crypto_generichash_final(&state, digest, sizeof digest);
  return HexEncode(digest, sizeof digest);
}

Result<ImportSummary> ImportActivityNdjsonBuffer(std::string_view content, uint64_t max_bytes,
                                                 store::InventoryStore& store,
                                                 store::ActivityStore& activity, const Clock& clock,
                                                 TransactionSink* transactions) {
  detail::LineReader reader(detail::MemorySource(content),
                            {.chunk_bytes = 1 << 20, .read_ahead = false, .max_bytes = max_bytes});
  return ImportActivityNdjsonLines(
      [&](std::string_view& line) -> Result<bool> {
        Result<bool> more = reader.Next(line);
        if (!more.ok() && more.status().code() == Code::kInvalidArgument &&
            more.status().details().empty()) {
          return InvalidFieldError("body", more.status().message());
        }
        return more;
      },
      store, activity, clock, transactions);
}

namespace {

Result<BulkImportSummary> Import(std::unique_ptr<detail::ByteSource> source, std::string_view name,
                                 bool read_ahead, store::InventoryStore& store,
                                 store::ActivityStore& activity, const BulkImportOptions& options,
                                 const Clock& clock) {
  auto start = std::chrono::steady_clock::now();
  detail::LineReader reader(std::move(source),
                            {.read_ahead = read_ahead, .max_bytes = options.max_input_bytes});
  Importer importer(store, activity, options, static_cast<uint32_t>(clock.NowSeconds() / 86400));
  ADS_RETURN_IF_ERROR(importer.LoadRegistry());
  ADS_RETURN_IF_ERROR(ReadRows(reader, importer, options));
  std::string digest = reader.DigestHex();
  BulkImportSummary& summary = importer.summary();
  ADS_ASSIGN_OR_RETURN(bool wrote, WriteOnce(options.ledger_path, digest, name, options.force,
                                             [&]() -> Result<uint64_t> {
                                               ADS_RETURN_IF_ERROR(importer.DeliverTransactions());
                                               ADS_RETURN_IF_ERROR(importer.Write());
                                               return summary.rows;
                                             }));
  summary.already_imported = !wrote;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace

Result<BulkImportSummary> BulkImportFile(const std::string& path, store::InventoryStore& store,
                                         store::ActivityStore& activity,
                                         const BulkImportOptions& options, const Clock& clock) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<detail::ByteSource> source, detail::OpenFileSource(path));
  return Import(std::move(source), path, /*read_ahead=*/true, store, activity, options, clock);
}

Result<BulkImportSummary> BulkImportBuffer(std::string_view content, std::string_view name,
                                           store::InventoryStore& store,
                                           store::ActivityStore& activity,
                                           const BulkImportOptions& options, const Clock& clock) {
  return Import(detail::MemorySource(content), name, /*read_ahead=*/false, store, activity, options,
                clock);
}

}  // namespace adserver::ingest
