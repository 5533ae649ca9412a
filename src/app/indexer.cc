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
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <unordered_map>

#include "app/server.h"
#include "common/address.h"
#include "common/log.h"

namespace adserver::app {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

constexpr size_t kMaxReorgDepth = 64;
constexpr size_t kAddressesPerGetLogs = 1000;

// Minimal JSON-RPC over HTTP/1.1 with one kept-alive connection.
class RpcClient {
 public:
  static Result<RpcClient> Create(const std::string& url) {
    std::string_view u = url;
    if (!u.starts_with("http://")) return InvalidArgumentError("--rpc must be http://host:port");
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

struct Checkpoint {
  uint64_t next = 0;
  std::deque<std::pair<uint64_t, std::string>> hashes;  // (block, hash), newest last
};

std::string CheckpointPath(const std::string& data_dir, int64_t chain) {
  return (std::filesystem::path(data_dir) / ("indexer-" + std::to_string(chain) + ".json"))
      .string();
}

std::optional<Checkpoint> LoadCheckpoint(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  Checkpoint c;
  std::string word;
  if (!(in >> c.next)) return std::nullopt;
  uint64_t n;
  while (in >> n >> word) c.hashes.emplace_back(n, word);
  return c;
}

// Text "next\n(block hash\n)*", written to a temporary file and renamed (atomic).
Status SaveCheckpoint(const std::string& path, const Checkpoint& c) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << c.next << '\n';
    for (const auto& [n, h] : c.hashes) out << n << ' ' << h << '\n';
    if (!out) return UnavailableError("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return UnavailableError("cannot rename checkpoint: " + ec.message());
  return OkStatus();
}

class Indexer {
 public:
  Indexer(std::unique_ptr<store::LmdbActivityStore> store, RpcClient rpc,
          const IndexerOptions& options, std::string checkpoint_path)
      : store_(std::move(store)),
        rpc_(std::move(rpc)),
        options_(options),
        checkpoint_path_(std::move(checkpoint_path)) {}

  Status LoadRegistry() {
    ADS_ASSIGN_OR_RETURN(auto projects, store_->ListProjects());
    contracts_.clear();
    for (const auto& p : projects) {
      for (const auto& c : p.contracts) {
        if (c.chain_id == options_.chain_id) contracts_[c.address] = p.id;
      }
    }
    return OkStatus();
  }

  Result<uint64_t> Head() {
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

  // Applies blocks [from, to]; returns the number applied (fewer on a reorg).
  Result<uint64_t> Apply(Checkpoint& cp, uint64_t from, uint64_t to);

 private:
  Result<std::string> FetchLogs(uint64_t from, uint64_t to);

  std::unique_ptr<store::LmdbActivityStore> store_;
  RpcClient rpc_;
  const IndexerOptions& options_;
  std::string checkpoint_path_;
  simdjson::dom::parser parser_;
  simdjson::dom::parser logs_parser_;
  std::unordered_map<Address, store::Id, AddressHash> contracts_;

 public:
  const std::string& checkpoint_path() const { return checkpoint_path_; }
};

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

Result<uint64_t> Indexer::Apply(Checkpoint& cp, uint64_t from, uint64_t to) {
  std::string batch = "[";
  for (uint64_t n = from; n <= to; ++n) {
    if (n != from) batch += ',';
    batch += R"({"jsonrpc":"2.0","id":)" + std::to_string(n - from) +
             R"(,"method":"eth_getBlockByNumber","params":[")" + Hex(n) + R"(",true]})";
  }
  ADS_ASSIGN_OR_RETURN(std::string blocks_body, rpc_.Call(batch + "]"));
  ADS_ASSIGN_OR_RETURN(std::string logs_body, FetchLogs(from, to));
  simdjson::dom::array blocks;
  if (parser_.parse(blocks_body).get_array().get(blocks) != simdjson::SUCCESS) {
    return UnavailableError("bad eth_getBlockByNumber batch answer");
  }
  std::vector<simdjson::dom::element> by_block(to - from + 1);
  for (simdjson::dom::element r : blocks) {
    uint64_t id = 0;
    simdjson::dom::element result;
    if (r["id"].get_uint64().get(id) != simdjson::SUCCESS || id > to - from ||
        r["result"].get(result) != simdjson::SUCCESS) {
      continue;
    }
    by_block[id] = result;
  }
  // Per block: (tx hash -> from), and the interactions (wallet, project) per tx, deduplicated.
  std::unordered_map<std::string, std::pair<Address, uint64_t>> tx_from;  // hash -> (from, block)
  std::map<uint64_t, uint32_t> block_day;
  std::set<std::tuple<std::string, store::Id>> seen;
  std::vector<store::ActivityRecord> rows;
  uint64_t applied = 0;
  for (uint64_t n = from; n <= to; ++n) {
    simdjson::dom::element b = by_block[n - from];
    std::string_view hash, parent, ts;
    if (!b.is_object() || b["hash"].get_string().get(hash) ||
        b["parentHash"].get_string().get(parent) || b["timestamp"].get_string().get(ts)) {
      return UnavailableError("block " + std::to_string(n) + " missing");
    }
    if (!cp.hashes.empty() && cp.hashes.back().first == n - 1 &&
        cp.hashes.back().second != parent) {
      // Reorg: forget the last known block and fetch again from there.
      ADS_LOG(warn, "reorg detected", "block", n, "chain", options_.chain_id);
      cp.hashes.pop_back();
      cp.next = n - 1;
      break;
    }
    uint32_t day = static_cast<uint32_t>(ParseHex(ts).value_or(0) / 86400);
    block_day[n] = day;
    simdjson::dom::array txs;
    if (b["transactions"].get_array().get(txs) != simdjson::SUCCESS) {
      return UnavailableError("block " + std::to_string(n) + " has no transactions array");
    }
    for (simdjson::dom::element tx : txs) {
      std::string_view th, f, t;
      if (tx["hash"].get_string().get(th) || tx["from"].get_string().get(f)) continue;
      auto from_addr = ParseAddress(f);
      if (!from_addr) continue;
      tx_from[std::string(th)] = {*from_addr, n};
      if (tx["to"].get_string().get(t) == simdjson::SUCCESS) {
        auto to_addr = ParseAddress(t);
        auto it = to_addr ? contracts_.find(*to_addr) : contracts_.end();
        if (it != contracts_.end() && seen.emplace(std::string(th), it->second).second) {
          rows.push_back({*from_addr, it->second, options_.chain_id, int64_t{day} * 86400, 1});
        }
      }
    }
    cp.hashes.emplace_back(n, std::string(hash));
    if (cp.hashes.size() > kMaxReorgDepth) cp.hashes.pop_front();
    cp.next = n + 1;
    ++applied;
  }
  simdjson::dom::array logs;
  if (logs_parser_.parse(logs_body).get_array().get(logs) == simdjson::SUCCESS) {
    for (simdjson::dom::element r : logs) {
      simdjson::dom::array list;
      if (r["result"].get_array().get(list) != simdjson::SUCCESS) continue;
      for (simdjson::dom::element log : list) {
        std::string_view addr, th;
        if (log["address"].get_string().get(addr) || log["transactionHash"].get_string().get(th)) {
          continue;
        }
        auto a = ParseAddress(addr);
        auto it = a ? contracts_.find(*a) : contracts_.end();
        auto tx = tx_from.find(std::string(th));
        if (it == contracts_.end() || tx == tx_from.end() || tx->second.second >= cp.next) continue;
        if (seen.emplace(std::string(th), it->second).second) {
          rows.push_back({tx->second.first, it->second, options_.chain_id,
                          int64_t{block_day[tx->second.second]} * 86400, 1});
        }
      }
    }
  }
  if (!rows.empty()) ADS_RETURN_IF_ERROR(store_->RecordActivity(rows));
  ADS_RETURN_IF_ERROR(SaveCheckpoint(checkpoint_path_, cp));
  return applied;
}

}  // namespace

Status RunIndexer(const std::string& data_dir, const IndexerOptions& options,
                  const std::atomic<bool>& stop) {
  ADS_ASSIGN_OR_RETURN(auto store, OpenActivityStore(data_dir));
  ADS_ASSIGN_OR_RETURN(RpcClient rpc, RpcClient::Create(options.rpc_url));
  Indexer indexer(std::move(store), std::move(rpc), options,
                  CheckpointPath(data_dir, options.chain_id));
  ADS_RETURN_IF_ERROR(indexer.LoadRegistry());
  std::optional<Checkpoint> cp = LoadCheckpoint(indexer.checkpoint_path());
  auto backoff = std::chrono::milliseconds(100);
  auto registry_loaded = std::chrono::steady_clock::now();
  while (!stop.load()) {
    Result<uint64_t> head = indexer.Head();
    if (head.ok() && !cp) {
      cp = Checkpoint{.next = options.from_block.value_or(*head), .hashes = {}};
    }
    Result<uint64_t> applied = head.status();
    if (head.ok()) {
      uint64_t target =
          *head >= uint64_t(options.confirmations) ? *head - options.confirmations : 0;
      if (cp->next > target) {
        applied = uint64_t{0};
      } else {
        uint64_t to = std::min(target, cp->next + uint64_t(options.batch_blocks) - 1);
        applied = indexer.Apply(*cp, cp->next, to);
      }
    }
    if (!applied.ok()) {
      ADS_LOG(warn, "indexer retrying", "status", applied.status(), "backoff_ms", backoff.count());
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
      continue;
    }
    backoff = std::chrono::milliseconds(100);
    if (std::chrono::steady_clock::now() - registry_loaded > std::chrono::seconds(5)) {
      ADS_RETURN_IF_ERROR(indexer.LoadRegistry());
      registry_loaded = std::chrono::steady_clock::now();
    }
    if (*applied == 0) std::this_thread::sleep_for(options.poll_interval);
  }
  return OkStatus();
}

}  // namespace adserver::app
