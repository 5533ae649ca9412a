#include "app/indexer.h"

#include <simdjson.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <unordered_map>

#include "app/server.h"
#include "common/address.h"
#include "common/check.h"
#include "common/log.h"

namespace adserver::app {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

constexpr size_t kAddressesPerGetLogs = 1000;
constexpr auto kMinBackoff = std::chrono::milliseconds(100);
constexpr auto kMaxBackoff = std::chrono::milliseconds(5000);
constexpr auto kRegistryReload = std::chrono::seconds(5);

// Minimal JSON-RPC over HTTP/1.1 with one kept-alive connection.
class RpcClient {
 public:
  static Result<RpcClient> Create(const std::string& url) {
    std::string_view u = url;
    if (!u.starts_with("http://"))
      return InvalidArgumentError("rpc URL must be http://host:port[/path]");
    u.remove_prefix(7);
    size_t slash = u.find('/');
    std::string_view hostport = u.substr(0, slash);
    RpcClient c;
    c.target_ = slash == std::string_view::npos ? "/" : std::string(u.substr(slash));
    size_t colon = hostport.rfind(':');
    c.host_ = std::string(hostport.substr(0, colon));
    c.port_ = colon == std::string_view::npos ? "80" : std::string(hostport.substr(colon + 1));
    return c;
  }

  // Posts `body` (a request or a batch) and returns the response body.
  Result<std::string> Call(const std::string& body) {
    try {
      if (!stream_) Connect();
      bhttp::request<bhttp::string_body> req{bhttp::verb::post, target_, 11};
      req.set(bhttp::field::host, host_);
      req.set(bhttp::field::content_type, "application/json");
      req.keep_alive(true);
      req.body() = body;
      req.prepare_payload();
      stream_->expires_after(std::chrono::seconds(10));
      bhttp::write(*stream_, req);
      beast::flat_buffer buffer;
      bhttp::response_parser<bhttp::string_body> parser;
      parser.body_limit(512 * 1024 * 1024);
      bhttp::read(*stream_, buffer, parser);
      if (parser.get().result_int() != 200) {
        stream_.reset();
        return UnavailableError("rpc HTTP " + std::to_string(parser.get().result_int()));
      }
      if (!parser.get().keep_alive()) stream_.reset();
      return std::move(parser.get().body());
    } catch (const std::exception& e) {
      stream_.reset();
      return UnavailableError(std::string("rpc: ") + e.what());
    }
  }

 private:
  void Connect() {
    tcp::resolver resolver(*ioc_);
    stream_ = std::make_unique<beast::tcp_stream>(*ioc_);
    stream_->expires_after(std::chrono::seconds(5));
    stream_->connect(resolver.resolve(host_, port_));
  }
  std::string host_, port_, target_;
  std::unique_ptr<asio::io_context> ioc_ = std::make_unique<asio::io_context>();
  std::unique_ptr<beast::tcp_stream> stream_;
};

std::string Hex(uint64_t n) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(n));
  return buf;
}

std::optional<uint64_t> ParseHex(std::string_view s) {
  if (!s.starts_with("0x")) return std::nullopt;
  uint64_t v = 0;
  for (char c : s.substr(2)) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<uint64_t>(d);
  }
  return v;
}

// Sleeps for `duration` unless `stop` is set first.
void WaitUnlessStopped(std::chrono::milliseconds duration, const std::atomic<bool>& stop) {
  auto deadline = std::chrono::steady_clock::now() + duration;
  while (!stop.load() && std::chrono::steady_clock::now() < deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    std::this_thread::sleep_for(
        std::clamp(left, std::chrono::milliseconds(0), std::chrono::milliseconds(20)));
  }
}

std::string LegacyCheckpointPath(const std::string& data_dir, int64_t chain) {
  return (std::filesystem::path(data_dir) / ("indexer-" + std::to_string(chain) + ".json"))
      .string();
}

// The checkpoint file of earlier versions: text "next\n(block hash\n)*". Keeps the hashes that
// run consecutively up to next - 1 (what ResetCheckpoint accepts).
std::optional<store::ChainCheckpoint> LoadLegacyCheckpoint(const std::string& path) {
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

// A batch of blocks as fetched from the node, with what is needed to attribute their logs.
struct BlockFetch {
  std::vector<store::IndexedBlock> blocks;  // consecutive from the first block asked for
  std::vector<uint64_t> days;               // per block: its UTC day
  // Transaction hash -> (sender, index into blocks): logs are attributed through it.
  std::unordered_map<std::string, std::pair<Address, size_t>> senders;
  // (transaction hash, project) already counted: once per transaction and project.
  std::set<std::pair<std::string, store::Id>> counted;
};

class Indexer {
 public:
  // `store` must outlive this object.
  Indexer(store::LmdbActivityStore& store, RpcClient rpc, const IndexerOptions& options,
          std::string legacy_checkpoint_path)
      : store_(store),
        rpc_(std::move(rpc)),
        options_(options),
        legacy_checkpoint_path_(std::move(legacy_checkpoint_path)) {}

  Status LoadRegistry();
  // One step: applies the next batch of blocks, or undoes the blocks a reorg abandoned, or
  // checks that the last applied block is still on the node's chain. Returns true if it changed
  // the index (step again at once), false when caught up. Errors are worth retrying unless
  // fatal() is set.
  Result<bool> Step();
  // Set when the index cannot follow the node any more (a reorg deeper than the journal).
  const Status& fatal() const { return fatal_; }

 private:
  Result<uint64_t> Head();
  // The chain's checkpoint; on the first run, one made from the legacy file, --from-block or
  // the head.
  Result<store::ChainCheckpoint> LoadOrStartCheckpoint(uint64_t head);
  // Blocks [from, to] with their interactions; stops early at a block the node does not have
  // or whose parent is not the previous block (the node changed while we asked).
  Result<std::vector<store::IndexedBlock>> FetchBlocks(uint64_t from, uint64_t to);
  Result<BlockFetch> FetchBlockBodies(uint64_t from, uint64_t to);
  Result<std::string> FetchLogs(uint64_t from, uint64_t to);
  Status AddLogRows(const std::string& logs_body, BlockFetch& fetch);
  // The node's hash of each block ("" if it has none).
  Result<std::vector<std::string>> FetchHashes(const std::vector<uint64_t>& numbers);
  Result<bool> CheckTip(const store::ChainCheckpoint& cp);
  Result<bool> Rewind(const store::ChainCheckpoint& cp);
  // The newest journaled block (or the parent of the oldest) the node still has; nullopt if
  // the fork is deeper than the journal.
  Result<std::optional<uint64_t>> FindCommonAncestor(const store::ChainCheckpoint& cp);
  // Appends block `n` to `fetch` with its direct calls to registry contracts as rows; false if
  // `b` is not a block or does not follow the previous one.
  bool AddBlock(simdjson::dom::element b, uint64_t n, BlockFetch& fetch) const;
  store::ActivityRecord Row(const Address& wallet, store::Id project, uint64_t day) const {
    return {wallet, project, options_.chain_id, static_cast<int64_t>(day) * 86400, 1};
  }

  store::LmdbActivityStore& store_;
  RpcClient rpc_;
  const IndexerOptions& options_;
  std::string legacy_checkpoint_path_;
  simdjson::dom::parser parser_;
  simdjson::dom::parser logs_parser_;
  std::unordered_map<Address, store::Id, AddressHash> contracts_;
  Status fatal_;
};

Status Indexer::LoadRegistry() {
  ADS_ASSIGN_OR_RETURN(auto projects, store_.ListProjects());
  contracts_.clear();
  for (const auto& p : projects) {
    for (const auto& c : p.contracts) {
      if (c.chain_id == options_.chain_id) contracts_[c.address] = p.id;
    }
  }
  return OkStatus();
}

Result<uint64_t> Indexer::Head() {
  ADS_ASSIGN_OR_RETURN(std::string body,
                       rpc_.Call(R"({"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"})"));
  simdjson::dom::element doc;
  std::string_view result;
  if (parser_.parse(body).get(doc) != simdjson::SUCCESS ||
      doc["result"].get_string().get(result) != simdjson::SUCCESS) {
    return UnavailableError("bad eth_blockNumber answer");
  }
  auto n = ParseHex(result);
  if (!n) return UnavailableError("bad block number");
  return *n;
}

Result<store::ChainCheckpoint> Indexer::LoadOrStartCheckpoint(uint64_t head) {
  store::LmdbActivityIndex& index = store_.activity();
  Result<store::ChainCheckpoint> loaded = index.LoadCheckpoint(options_.chain_id);
  if (loaded.status().code() != Code::kNotFound) return loaded;
  store::ChainCheckpoint start{.next_block = options_.from_block.value_or(head), .recent = {}};
  if (auto legacy = LoadLegacyCheckpoint(legacy_checkpoint_path_)) {
    start = std::move(*legacy);
    ADS_LOG(info, "indexer checkpoint migrated into the activity index; file no longer used",
            "file", legacy_checkpoint_path_);
  }
  ADS_RETURN_IF_ERROR(index.ResetCheckpoint(options_.chain_id, start));
  ADS_LOG(info, "indexer starts", "chain", options_.chain_id, "block", start.next_block);
  return start;
}

Result<bool> Indexer::Step() {
  ADS_ASSIGN_OR_RETURN(uint64_t head, Head());
  ADS_ASSIGN_OR_RETURN(store::ChainCheckpoint cp, LoadOrStartCheckpoint(head));
  uint64_t confirmations = static_cast<uint64_t>(options_.confirmations);
  uint64_t target = head >= confirmations ? head - confirmations : 0;
  if (cp.next_block > target) return CheckTip(cp);
  uint64_t to = std::min(target, cp.next_block + uint64_t(options_.batch_blocks) - 1);
  ADS_ASSIGN_OR_RETURN(std::vector<store::IndexedBlock> blocks, FetchBlocks(cp.next_block, to));
  if (blocks.empty()) return false;
  if (!cp.recent.empty() && blocks.front().parent_hash != cp.recent.back().hash) {
    return Rewind(cp);
  }
  ADS_RETURN_IF_ERROR(store_.activity().ApplyBlocks(options_.chain_id, blocks));
  return true;
}

Result<bool> Indexer::CheckTip(const store::ChainCheckpoint& cp) {
  if (cp.recent.empty()) return false;
  ADS_ASSIGN_OR_RETURN(std::vector<std::string> hashes, FetchHashes({cp.recent.back().number}));
  if (hashes[0] == cp.recent.back().hash) return false;
  return Rewind(cp);
}

Result<bool> Indexer::Rewind(const store::ChainCheckpoint& cp) {
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
    // The node's answers disagree (the tip is still there, yet a new block does not follow it).
    return UnavailableError("node answers disagree about block " +
                            std::to_string(cp.next_block - 1));
  }
  Status undone = store_.activity().UndoBlocksAfter(options_.chain_id, *ancestor);
  if (undone.code() == Code::kConflict) fatal_ = undone;
  ADS_RETURN_IF_ERROR(undone);
  ADS_LOG(warn, "reorg: abandoned blocks undone", "chain", options_.chain_id, "from", *ancestor + 1,
          "to", cp.next_block - 1);
  return true;
}

Result<std::optional<uint64_t>> Indexer::FindCommonAncestor(const store::ChainCheckpoint& cp) {
  const store::BlockRef& oldest = cp.recent.front();
  bool parent_known = !oldest.parent_hash.empty() && oldest.number > 0;
  std::vector<uint64_t> numbers;
  for (const store::BlockRef& b : cp.recent) numbers.push_back(b.number);
  if (parent_known) numbers.push_back(oldest.number - 1);
  ADS_ASSIGN_OR_RETURN(std::vector<std::string> hashes, FetchHashes(numbers));
  for (size_t i = cp.recent.size(); i-- > 0;) {
    if (hashes[i] == cp.recent[i].hash) return std::optional<uint64_t>(cp.recent[i].number);
  }
  if (parent_known && hashes.back() == oldest.parent_hash) {
    return std::optional<uint64_t>(oldest.number - 1);
  }
  return std::optional<uint64_t>();
}

Result<std::vector<std::string>> Indexer::FetchHashes(const std::vector<uint64_t>& numbers) {
  std::string batch = "[";
  for (size_t i = 0; i < numbers.size(); ++i) {
    if (i) batch += ',';
    batch += R"({"jsonrpc":"2.0","id":)" + std::to_string(i) +
             R"(,"method":"eth_getBlockByNumber","params":[")" + Hex(numbers[i]) + R"(",false]})";
  }
  ADS_ASSIGN_OR_RETURN(std::string body, rpc_.Call(batch + "]"));
  simdjson::dom::array answers;
  if (parser_.parse(body).get_array().get(answers) != simdjson::SUCCESS) {
    return UnavailableError("bad eth_getBlockByNumber batch answer");
  }
  std::vector<std::string> hashes(numbers.size());
  std::vector<bool> answered(numbers.size());
  for (simdjson::dom::element r : answers) {
    uint64_t id = 0;
    simdjson::dom::element result;
    if (r["id"].get_uint64().get(id) != simdjson::SUCCESS || id >= numbers.size() ||
        r["result"].get(result) != simdjson::SUCCESS) {
      continue;  // an error answer: treated as unanswered below
    }
    answered[id] = true;
    std::string_view hash;
    if (result.is_object() && result["hash"].get_string().get(hash) == simdjson::SUCCESS) {
      hashes[id] = std::string(hash);
    }
  }
  for (bool a : answered) {
    if (!a) return UnavailableError("eth_getBlockByNumber batch answer incomplete");
  }
  return hashes;
}

Result<std::vector<store::IndexedBlock>> Indexer::FetchBlocks(uint64_t from, uint64_t to) {
  ADS_ASSIGN_OR_RETURN(BlockFetch fetch, FetchBlockBodies(from, to));
  if (fetch.blocks.empty()) return std::vector<store::IndexedBlock>();
  // Logs are asked for only now, for the blocks we have: a log whose block hash differs from
  // ours means the node reorganised in between; the next step starts over.
  uint64_t last = fetch.blocks.back().number;
  ADS_ASSIGN_OR_RETURN(std::string logs_body, FetchLogs(from, last));
  ADS_RETURN_IF_ERROR(AddLogRows(logs_body, fetch));
  return std::move(fetch.blocks);
}

Result<BlockFetch> Indexer::FetchBlockBodies(uint64_t from, uint64_t to) {
  std::string batch = "[";
  for (uint64_t n = from; n <= to; ++n) {
    if (n != from) batch += ',';
    batch += R"({"jsonrpc":"2.0","id":)" + std::to_string(n - from) +
             R"(,"method":"eth_getBlockByNumber","params":[")" + Hex(n) + R"(",true]})";
  }
  ADS_ASSIGN_OR_RETURN(std::string body, rpc_.Call(batch + "]"));
  simdjson::dom::array answers;
  if (parser_.parse(body).get_array().get(answers) != simdjson::SUCCESS) {
    return UnavailableError("bad eth_getBlockByNumber batch answer");
  }
  std::vector<simdjson::dom::element> by_block(to - from + 1);
  for (simdjson::dom::element r : answers) {
    uint64_t id = 0;
    simdjson::dom::element result;
    if (r["id"].get_uint64().get(id) == simdjson::SUCCESS && id <= to - from &&
        r["result"].get(result) == simdjson::SUCCESS) {
      by_block[id] = result;
    }
  }
  BlockFetch fetch;
  for (uint64_t n = from; n <= to; ++n) {
    if (!AddBlock(by_block[n - from], n, fetch)) break;
  }
  return fetch;
}

bool Indexer::AddBlock(simdjson::dom::element b, uint64_t n, BlockFetch& fetch) const {
  std::string_view hash, parent, ts;
  simdjson::dom::array txs;
  if (!b.is_object() || b["hash"].get_string().get(hash) ||
      b["parentHash"].get_string().get(parent) || b["timestamp"].get_string().get(ts) ||
      b["transactions"].get_array().get(txs)) {
    return false;  // the node has no such block (any more)
  }
  if (!fetch.blocks.empty() && fetch.blocks.back().hash != parent) return false;
  uint64_t day = ParseHex(ts).value_or(0) / 86400;
  fetch.days.push_back(day);
  store::IndexedBlock& block =
      fetch.blocks.emplace_back(store::IndexedBlock{n, std::string(hash), std::string(parent), {}});
  for (simdjson::dom::element tx : txs) {
    std::string_view th, f, t;
    if (tx["hash"].get_string().get(th) || tx["from"].get_string().get(f)) continue;
    auto from_addr = ParseAddress(f);
    if (!from_addr) continue;
    fetch.senders[std::string(th)] = {*from_addr, fetch.blocks.size() - 1};
    if (tx["to"].get_string().get(t) != simdjson::SUCCESS) continue;
    auto to_addr = ParseAddress(t);
    auto it = to_addr ? contracts_.find(*to_addr) : contracts_.end();
    if (it != contracts_.end() && fetch.counted.emplace(th, it->second).second) {
      block.rows.push_back(Row(*from_addr, it->second, day));
    }
  }
  return true;
}

Result<std::string> Indexer::FetchLogs(uint64_t from, uint64_t to) {
  // One eth_getLogs per 1000 registry addresses, as one batch.
  std::string batch = "[";
  size_t i = 0, id = 0;
  std::string addresses;
  auto flush = [&] {
    if (addresses.empty()) return;
    if (id) batch += ',';
    batch += R"({"jsonrpc":"2.0","id":)" + std::to_string(id++) +
             R"(,"method":"eth_getLogs","params":[{"fromBlock":")" + Hex(from) +
             R"(","toBlock":")" + Hex(to) + R"(","address":[)" + addresses + "]}]}";
    addresses.clear();
  };
  for (const auto& [address, project] : contracts_) {
    if (!addresses.empty()) addresses += ',';
    addresses += '"' + FormatAddress(address) + '"';
    if (++i % kAddressesPerGetLogs == 0) flush();
  }
  flush();
  if (id == 0) return std::string("[]");
  return rpc_.Call(batch + "]");
}

Status Indexer::AddLogRows(const std::string& logs_body, BlockFetch& fetch) {
  simdjson::dom::array answers;
  if (logs_parser_.parse(logs_body).get_array().get(answers) != simdjson::SUCCESS) {
    return UnavailableError("bad eth_getLogs batch answer");
  }
  for (simdjson::dom::element r : answers) {
    simdjson::dom::array list;
    if (r["result"].get_array().get(list) != simdjson::SUCCESS) {
      std::string_view message;
      if (r["error"]["message"].get_string().get(message) != simdjson::SUCCESS) {
        message = "no result";
      }
      return UnavailableError("eth_getLogs failed: " + std::string(message));
    }
    for (simdjson::dom::element log : list) {
      std::string_view addr, th, block_hash;
      if (log["address"].get_string().get(addr) || log["transactionHash"].get_string().get(th) ||
          log["blockHash"].get_string().get(block_hash)) {
        continue;
      }
      auto a = ParseAddress(addr);
      auto it = a ? contracts_.find(*a) : contracts_.end();
      if (it == contracts_.end()) continue;
      auto tx = fetch.senders.find(std::string(th));
      if (tx == fetch.senders.end()) {
        return UnavailableError("log of an unknown transaction: the node reorganised");
      }
      store::IndexedBlock& block = fetch.blocks[tx->second.second];
      if (block.hash != block_hash) {
        return UnavailableError("log of another block: the node reorganised");
      }
      if (fetch.counted.emplace(std::string(th), it->second).second) {
        block.rows.push_back(Row(tx->second.first, it->second, fetch.days[tx->second.second]));
      }
    }
  }
  return OkStatus();
}

}  // namespace

Status RunIndexer(store::LmdbActivityStore& store, const std::string& data_dir,
                  const IndexerOptions& options, const std::atomic<bool>& stop) {
  ADS_ASSIGN_OR_RETURN(RpcClient rpc, RpcClient::Create(options.rpc_url));
  Indexer indexer(store, std::move(rpc), options, LegacyCheckpointPath(data_dir, options.chain_id));
  ADS_RETURN_IF_ERROR(indexer.LoadRegistry());
  ADS_LOG(info, "indexer following", "chain", options.chain_id, "confirmations",
          options.confirmations);
  auto backoff = kMinBackoff;
  auto registry_loaded = std::chrono::steady_clock::now();
  while (!stop.load()) {
    Result<bool> progressed = indexer.Step();
    if (!indexer.fatal().ok()) return indexer.fatal();
    if (!progressed.ok()) {
      ADS_LOG(warn, "indexer retrying", "status", progressed.status(), "backoff_ms",
              backoff.count());
      WaitUnlessStopped(backoff, stop);
      backoff = std::min(backoff * 2, kMaxBackoff);
      continue;
    }
    backoff = kMinBackoff;
    if (std::chrono::steady_clock::now() - registry_loaded > kRegistryReload) {
      // A failed reload (e.g. the database is busy) keeps the registry loaded before.
      if (Status st = indexer.LoadRegistry(); !st.ok()) {
        ADS_LOG(warn, "indexer keeps its registry; reload failed", "status", st);
      }
      registry_loaded = std::chrono::steady_clock::now();
    }
    if (!*progressed) WaitUnlessStopped(options.poll_interval, stop);
  }
  return OkStatus();
}

Status RunIndexer(const std::string& data_dir, const IndexerOptions& options,
                  const std::atomic<bool>& stop) {
  ADS_ASSIGN_OR_RETURN(auto store, OpenActivityStore(data_dir));
  return RunIndexer(*store, data_dir, options, stop);
}

IndexerThread::IndexerThread(store::LmdbActivityStore& store, std::string data_dir,
                             IndexerOptions options)
    : store_(store), data_dir_(std::move(data_dir)), options_(std::move(options)) {}

IndexerThread::~IndexerThread() { Stop(); }

void IndexerThread::Start() {
  ADS_CHECK(!thread_.joinable()) << "IndexerThread started twice";
  thread_ = std::thread([this] {
    Status status = RunIndexer(store_, data_dir_, options_, stop_);
    if (!status.ok()) ADS_LOG(error, "indexer stopped; serving goes on", "status", status);
  });
}

void IndexerThread::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

}  // namespace adserver::app
