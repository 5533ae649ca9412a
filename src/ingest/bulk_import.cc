#include "ingest/bulk_import.h"

#include <simdjson.h>
#include <sodium.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <unordered_map>

#include "common/address.h"

namespace adserver::ingest {
namespace {

constexpr size_t kReadChunk = 1 << 20;
// BLAKE2b-256 of the decompressed content identifies a file in the ledger (faster than SHA-256).
constexpr size_t kDigestBytes = 32;
constexpr const char* kRoles[] = {"wallet", "contract", "project", "chain", "time", "status"};

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
}

Status ApplyMapping(const std::vector<std::string>& h, const ColumnMapping& m, Plan& p) {
  for (const auto& [role, columns] : m.roles) {
    std::vector<int> idx;
    for (const std::string& c : columns) {
      int i = Find(h, {Lower(c).c_str()});
      if (i < 0) return InvalidArgumentError("mapped column " + c + " is not in the header");
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
    }
  }
  if (p.wallets.empty() && p.topic_wallets.empty()) {
    return InvalidArgumentError("cannot tell the wallet column; use --map wallet=COLUMN");
  }
  if (p.contract < 0 && p.project < 0) {
    return InvalidArgumentError("cannot tell the contract column; use --map contract=COLUMN");
  }
  return OkStatus();
}

// Splits one CSV line (RFC 4180 quoting, no newlines inside fields) into `fields`; quoted
// fields with doubled quotes are unescaped into `scratch`.
void SplitCsv(std::string_view line, std::vector<std::string_view>& fields,
              std::vector<std::string>& scratch) {
  fields.clear();
  scratch.clear();
  size_t i = 0;
  while (true) {
    if (i < line.size() && line[i] == '"') {
      size_t start = ++i;
      bool escaped = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            escaped = true;
            i += 2;
            continue;
          }
          break;
        }
        ++i;
      }
      std::string_view raw = line.substr(start, i - start);
      if (escaped) {
        std::string s;
        for (size_t k = 0; k < raw.size(); ++k) {
          s.push_back(raw[k]);
          if (raw[k] == '"') ++k;
        }
        scratch.push_back(std::move(s));
        raw = scratch.back();
      }
      fields.push_back(raw);
      i = std::min(line.find(',', i), line.size());
    } else {
      size_t end = std::min(line.find(',', i), line.size());
      fields.push_back(line.substr(i, end - i));
      i = end;
    }
    if (i >= line.size()) break;
    ++i;  // the comma
  }
}

struct Key {
  Address wallet;
  uint32_t project;
  uint32_t chain;
  bool operator==(const Key&) const = default;
};
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
struct Agg {
  uint32_t day = 0;
  uint32_t count = 0;
};

// Open-addressing (linear probing) map Key -> Agg: the import's hot path, ~3x faster than
// std::unordered_map's node per entry.
class AggMap {
 public:
  AggMap() : slots_(1 << 16) {}
  Agg& operator[](const Key& k) {
    if ((size_ + 1) * 10 > slots_.size() * 7) Grow();
    size_t mask = slots_.size() - 1;
    for (size_t i = KeyHash{}(k)&mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (!s.used) {
        s.used = true;
        s.key = k;
        ++size_;
        return s.agg;
      }
      if (s.key == k) return s.agg;
    }
  }
  size_t size() const { return size_; }
  template <typename F>
  void ForEach(F&& f) const {
    for (const Slot& s : slots_) {
      if (s.used) f(s.key, s.agg);
    }
  }

 private:
  struct Slot {
    Key key;
    Agg agg;
    bool used = false;
  };
  void Grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    size_ = 0;
    for (const Slot& s : old) {
      if (s.used) (*this)[s.key] = s.agg;
    }
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

// One import in progress.
class Importer {
 public:
  Importer(store::Store& store, const BulkImportOptions& options, uint32_t today)
      : store_(store), options_(options), today_(today) {}

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
  }

  void Reject(uint64_t line, std::string message) {
    ++summary_.rejected;
    if (summary_.errors.size() < kMaxReportedErrors) {
      summary_.errors.push_back({static_cast<size_t>(line), std::move(message)});
    }
  }

  Status Write() {
    std::vector<store::ActivityRecord> batch;
    batch.reserve(std::min(agg_.size(), options_.rows_per_batch));
    Status status;
    agg_.ForEach([&](const Key& k, const Agg& v) {
      if (!status.ok()) return;
      batch.push_back({.wallet = k.wallet,
                       .project_id = k.project,
                       .chain_id = k.chain,
                       .last_seen = int64_t{v.day} * 86400,
                       .count = v.count});
      if (batch.size() == options_.rows_per_batch) {
        status = store_.RecordActivity(batch);
        batch.clear();
      }
    });
    ADS_RETURN_IF_ERROR(status);
    if (!batch.empty()) ADS_RETURN_IF_ERROR(store_.RecordActivity(batch));
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
    auto it = by_contract_.find(store::ContractRef{chain, *a});
    if (it == by_contract_.end()) {
      ++summary_.unknown_contract;
      return std::nullopt;
    }
    return it->second;
  }

  size_t Add(const Address& wallet, store::Id project, int64_t chain, uint32_t day) {
    if (wallet == Address{}) return 0;  // mints and burns
    Agg& a = agg_[Key{wallet, static_cast<uint32_t>(project), static_cast<uint32_t>(chain)}];
    a.day = std::max(a.day, day);
    ++a.count;
    return 1;
  }

  store::Store& store_;
  const BulkImportOptions& options_;
  uint32_t today_;
  std::vector<std::string> header_;
  Plan plan_;
  std::unordered_map<std::string, store::Id> by_slug_;
  std::unordered_map<store::ContractRef, store::Id, ContractRefHashForImport> by_contract_;
  AggMap agg_;
  BulkImportSummary summary_;
};

// Reads a plain or gzip file (or stdin) line by line and hashes the decompressed content.
class LineReader {
 public:
  static Result<std::unique_ptr<LineReader>> Open(const std::string& path) {
    auto r = std::unique_ptr<LineReader>(new LineReader);
    r->file_ = path == "-" ? gzdopen(dup(STDIN_FILENO), "rb") : gzopen(path.c_str(), "rb");
    if (r->file_ == nullptr) return UnavailableError("cannot open " + path);
    gzbuffer(r->file_, kReadChunk);
    if (path != "-") {
      std::error_code ec;
      auto size = std::filesystem::file_size(path, ec);
      r->total_ = ec ? 0 : size;
    }
    crypto_generichash_init(&r->hash_, nullptr, 0, kDigestBytes);
    return r;
  }
  ~LineReader() {
    if (file_ != nullptr) gzclose(file_);
  }
  // The next line without its "\r\n"; false at the end.
  Result<bool> Next(std::string_view& line) {
    while (true) {
      size_t nl = buffer_.find('\n', pos_);
      if (nl != std::string::npos || eof_) {
        if (nl == std::string::npos) {
          if (pos_ >= buffer_.size()) return false;
          nl = buffer_.size();
        }
        line = std::string_view(buffer_).substr(pos_, nl - pos_);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        pos_ = nl + 1;
        ++line_;
        return true;
      }
      buffer_.erase(0, pos_);
      pos_ = 0;
      size_t old = buffer_.size();
      buffer_.resize(old + kReadChunk);
      int n = gzread(file_, buffer_.data() + old, kReadChunk);
      if (n < 0) return UnavailableError("read error (corrupt gzip?)");
      buffer_.resize(old + static_cast<size_t>(n));
      crypto_generichash_update(&hash_, reinterpret_cast<const uint8_t*>(buffer_.data() + old),
                                static_cast<size_t>(n));
      if (n == 0) eof_ = true;
    }
  }
  uint64_t line() const { return line_; }
  uint64_t bytes_read() const { return static_cast<uint64_t>(gzoffset(file_)); }
  uint64_t total() const { return total_; }
  std::string DigestHex() {
    uint8_t d[kDigestBytes];
    crypto_generichash_final(&hash_, d, sizeof d);
    return HexEncode(d, sizeof d);
  }

 private:
  LineReader() = default;
  gzFile file_ = nullptr;
  std::string buffer_;
  size_t pos_ = 0;
  bool eof_ = false;
  uint64_t line_ = 0;
  uint64_t total_ = 0;
  crypto_generichash_state hash_;
};

// A JSON object's values as text, in `header` order (numbers and booleans as written;
// "topics": [..] fills topic0..topic3).
bool JsonFields(simdjson::dom::element obj, const std::vector<std::string>& header,
                std::vector<std::string>& storage, std::vector<std::string_view>& fields) {
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
    if (line.compare(0, digest.size(), digest) == 0) return true;
  }
  return false;
}

Status RememberInLedger(const std::string& path, const std::string& digest, const std::string& file,
                        uint64_t rows) {
  std::ofstream out(path, std::ios::app);
  out << digest << ' ' << rows << ' ' << file << '\n';
  if (!out) return UnavailableError("cannot write import ledger " + path);
  return OkStatus();
}

Status ReadRows(LineReader& reader, Importer& importer, const BulkImportOptions& options) {
  simdjson::dom::parser parser;
  std::vector<std::string_view> fields;
  std::vector<std::string> scratch;
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
          return InvalidArgumentError("line 1 is not a JSON object");
        }
        header = JsonHeader(obj);
        // adserver's NDJSON names a project or a contract per line: know both from line 1.
        if (std::find(header.begin(), header.end(), "wallet") != header.end()) {
          for (const char* k : {"project", "contract", "chainId", "timestamp"}) {
            if (std::find(header.begin(), header.end(), k) == header.end()) header.push_back(k);
          }
        }
      } else {
        SplitCsv(line, fields, scratch);
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
      SplitCsv(line, fields, scratch);
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
                                " (wallet, contract, project, chain, time, status)");
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

Result<BulkImportSummary> BulkImportFile(const std::string& path, store::Store& store,
                                         const BulkImportOptions& options, const Clock& clock) {
  auto start = std::chrono::steady_clock::now();
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<LineReader> reader, LineReader::Open(path));
  Importer importer(store, options, static_cast<uint32_t>(clock.NowSeconds() / 86400));
  ADS_RETURN_IF_ERROR(importer.LoadRegistry());
  ADS_RETURN_IF_ERROR(ReadRows(*reader, importer, options));
  std::string digest = reader->DigestHex();
  BulkImportSummary& summary = importer.summary();
  if (!options.ledger_path.empty() && !options.force && InLedger(options.ledger_path, digest)) {
    summary.already_imported = true;
  } else {
    ADS_RETURN_IF_ERROR(importer.Write());
    if (!options.ledger_path.empty()) {
      ADS_RETURN_IF_ERROR(RememberInLedger(options.ledger_path, digest, path, summary.rows));
    }
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace adserver::ingest
