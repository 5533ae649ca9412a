#include "ingest/chain/json_rpc_chain_source.h"

#include <simdjson.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

namespace adserver::ingest::chain {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

constexpr size_t kAddressesPerGetLogs = 1000;

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

// A batch of eth_getBlockByNumber calls, one per number, ids 0..n-1.
template <typename Numbers>
std::string GetBlockByNumberBatch(const Numbers& numbers, bool full_transactions) {
  std::string batch = "[";
  size_t id = 0;
  for (uint64_t n : numbers) {
    if (id) batch += ',';
    batch += R"({"jsonrpc":"2.0","id":)" + std::to_string(id++) +
             R"(,"method":"eth_getBlockByNumber","params":[")" + Hex(n) + "\"," +
             (full_transactions ? "true" : "false") + "]}";
  }
  return batch + "]";
}

// The transactions of `txs` the indexer can use (a hash and a sender) appended to `block`.
void AddTransactions(simdjson::dom::array txs, ChainBlock& block) {
  for (simdjson::dom::element tx : txs) {
    std::string_view th, f, t;
    if (tx["hash"].get_string().get(th) || tx["from"].get_string().get(f)) continue;
    auto hash = ParseHash32(th);
    auto from = ParseAddress(f);
    if (!hash || !from) continue;
    ChainTransaction& out = block.transactions.emplace_back();
    out.hash = *hash;
    out.from = *from;
    if (tx["to"].get_string().get(t) == simdjson::SUCCESS) out.to = ParseAddress(t);
  }
}

// Block `b` as a ChainBlock; nullopt if `b` is not a block (the node has no such block).
std::optional<ChainBlock> ToBlock(simdjson::dom::element b, uint64_t n) {
  std::string_view hash, parent, ts;
  simdjson::dom::array txs;
  if (!b.is_object() || b["hash"].get_string().get(hash) ||
      b["parentHash"].get_string().get(parent) || b["timestamp"].get_string().get(ts) ||
      b["transactions"].get_array().get(txs)) {
    return std::nullopt;
  }
  auto h = ParseHash32(hash);
  auto p = ParseHash32(parent);
  if (!h || !p) return std::nullopt;
  ChainBlock block{.number = n,
                   .hash = *h,
                   .parent_hash = *p,
                   .timestamp = static_cast<int64_t>(ParseHex(ts).value_or(0)),
                   .transactions = {}};
  AddTransactions(txs, block);
  return block;
}

}  // namespace

struct JsonRpcChainSource::Impl {
  explicit Impl(RpcClient client) : rpc(std::move(client)) {}
  RpcClient rpc;
  simdjson::dom::parser parser;

  Result<std::vector<ChainBlock>> FetchBlockBodies(uint64_t from, uint64_t to);
  Result<std::string> FetchLogs(uint64_t from, uint64_t to, std::span<const Address> emitters);
  Status AddLogs(const std::string& logs_body, std::span<const Address> emitters,
                 std::vector<ChainBlock>& blocks);
};

JsonRpcChainSource::JsonRpcChainSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JsonRpcChainSource::~JsonRpcChainSource() = default;

Result<std::unique_ptr<JsonRpcChainSource>> JsonRpcChainSource::Create(const std::string& url) {
  ADS_ASSIGN_OR_RETURN(RpcClient rpc, RpcClient::Create(url));
  auto impl = std::make_unique<Impl>(std::move(rpc));
  return std::unique_ptr<JsonRpcChainSource>(new JsonRpcChainSource(std::move(impl)));
}

Result<uint64_t> JsonRpcChainSource::HeadBlockNumber() {
  ADS_ASSIGN_OR_RETURN(std::string body,
                       impl_->rpc.Call(R"({"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"})"));
  simdjson::dom::element doc;
  std::string_view result;
  if (impl_->parser.parse(body).get(doc) != simdjson::SUCCESS ||
      doc["result"].get_string().get(result) != simdjson::SUCCESS) {
    return UnavailableError("bad eth_blockNumber answer");
  }
  auto n = ParseHex(result);
  if (!n) return UnavailableError("bad block number");
  return *n;
}

Result<std::vector<std::optional<Hash32>>> JsonRpcChainSource::GetBlockHashes(
    std::span<const uint64_t> numbers) {
  ADS_ASSIGN_OR_RETURN(std::string body, impl_->rpc.Call(GetBlockByNumberBatch(numbers, false)));
  simdjson::dom::array answers;
  if (impl_->parser.parse(body).get_array().get(answers) != simdjson::SUCCESS) {
    return UnavailableError("bad eth_getBlockByNumber batch answer");
  }
  std::vector<std::optional<Hash32>> hashes(numbers.size());
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
      hashes[id] = ParseHash32(hash);
    }
  }
  for (bool a : answered) {
    if (!a) return UnavailableError("eth_getBlockByNumber batch answer incomplete");
  }
  return hashes;
}

Result<std::vector<ChainBlock>> JsonRpcChainSource::GetBlocks(
    uint64_t from, uint64_t to, std::span<const Address> log_emitters) {
  ADS_ASSIGN_OR_RETURN(std::vector<ChainBlock> blocks, impl_->FetchBlockBodies(from, to));
  if (blocks.empty() || log_emitters.empty()) return blocks;
  // Logs are asked for only now, for the blocks we have: a log whose block hash differs from
  // ours means the node reorganised in between; the caller asks again.
  ADS_ASSIGN_OR_RETURN(std::string logs_body,
                       impl_->FetchLogs(from, blocks.back().number, log_emitters));
  ADS_RETURN_IF_ERROR(impl_->AddLogs(logs_body, log_emitters, blocks));
  return blocks;
}

Result<std::vector<ChainBlock>> JsonRpcChainSource::Impl::FetchBlockBodies(uint64_t from,
                                                                           uint64_t to) {
  std::vector<uint64_t> numbers;
  for (uint64_t n = from; n <= to; ++n) numbers.push_back(n);
  ADS_ASSIGN_OR_RETURN(std::string body, rpc.Call(GetBlockByNumberBatch(numbers, true)));
  simdjson::dom::array answers;
  if (parser.parse(body).get_array().get(answers) != simdjson::SUCCESS) {
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
  std::vector<ChainBlock> blocks;
  for (uint64_t n = from; n <= to; ++n) {
    std::optional<ChainBlock> block = ToBlock(by_block[n - from], n);
    if (!block || (!blocks.empty() && blocks.back().hash != block->parent_hash)) break;
    blocks.push_back(std::move(*block));
  }
  return blocks;
}

Result<std::string> JsonRpcChainSource::Impl::FetchLogs(uint64_t from, uint64_t to,
                                                        std::span<const Address> emitters) {
  // One eth_getLogs per 1000 addresses, as one batch.
  std::string batch = "[";
  size_t id = 0;
  for (size_t begin = 0; begin < emitters.size(); begin += kAddressesPerGetLogs) {
    std::string addresses;
    for (const Address& a :
         emitters.subspan(begin, std::min(kAddressesPerGetLogs, emitters.size() - begin))) {
      if (!addresses.empty()) addresses += ',';
      addresses += '"' + FormatAddress(a) + '"';
    }
    if (id) batch += ',';
    batch += R"({"jsonrpc":"2.0","id":)" + std::to_string(id++) +
             R"(,"method":"eth_getLogs","params":[{"fromBlock":")" + Hex(from) +
             R"(","toBlock":")" + Hex(to) + R"(","address":[)" + addresses + "]}]}";
  }
  return rpc.Call(batch + "]");
}

Status JsonRpcChainSource::Impl::AddLogs(const std::string& logs_body,
                                         std::span<const Address> emitters,
                                         std::vector<ChainBlock>& blocks) {
  simdjson::dom::array answers;
  if (parser.parse(logs_body).get_array().get(answers) != simdjson::SUCCESS) {
    return UnavailableError("bad eth_getLogs batch answer");
  }
  std::unordered_set<Address, AddressHash> watched(emitters.begin(), emitters.end());
  // Transaction hash -> (block, transaction): logs are attached through it.
  std::unordered_map<Hash32, std::pair<size_t, size_t>, Hash32Hash> txs;
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (size_t t = 0; t < blocks[b].transactions.size(); ++t) {
      txs[blocks[b].transactions[t].hash] = {b, t};
    }
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
      std::string_view addr, th, block_hash, index;
      if (log["address"].get_string().get(addr) || log["transactionHash"].get_string().get(th) ||
          log["blockHash"].get_string().get(block_hash) ||
          log["logIndex"].get_string().get(index)) {
        continue;
      }
      auto a = ParseAddress(addr);
      auto log_index = ParseHex(index);
      if (!a || !log_index || !watched.contains(*a)) continue;
      std::optional<Hash32> tx_hash = ParseHash32(th);
      auto tx = tx_hash ? txs.find(*tx_hash) : txs.end();
      if (tx == txs.end()) {
        return UnavailableError("log of an unknown transaction: the node reorganised");
      }
      ChainBlock& block = blocks[tx->second.first];
      if (ParseHash32(block_hash) != block.hash) {
        return UnavailableError("log of another block: the node reorganised");
      }
      block.transactions[tx->second.second].logs.push_back({*a, *log_index});
    }
  }
  for (ChainBlock& block : blocks) {
    for (ChainTransaction& tx : block.transactions) {
      std::sort(tx.logs.begin(), tx.logs.end(),
                [](const ChainLog& x, const ChainLog& y) { return x.log_index < y.log_index; });
    }
  }
  return OkStatus();
}

}  // namespace adserver::ingest::chain
