#include "http/server.h"

#include <algorithm>
#include <array>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/status.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <future>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/cpu_budget.h"
#include "common/ip_address.h"
#include "common/log.h"
#include "common/metrics_text.h"
#include "common/mutex.h"
#include "common/thread_setup.h"
#include "http/detail/admission.h"
#include "http/detail/ascii.h"
#include "http/detail/body_spool.h"
#include "http/detail/listen_address.h"
#include "http/detail/loop_bound.h"
#include "http/detail/request_id.h"
#include "http/detail/stamped_recv.h"

namespace adserver::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;
using ReusePort = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;
// Sockets and streams are bound to their loop's io_context executor type rather than the
// type-erased any_io_executor: every asynchronous operation copies its executor, and the
// type-erased one is a heap-free but indirect object whose copies showed up in profiles.
using Executor = asio::io_context::executor_type;
using Socket = asio::basic_stream_socket<tcp, Executor>;
using Acceptor = asio::basic_socket_acceptor<tcp, Executor>;

// Bytes asked for by each read of a request (the buffer grows for larger requests).
constexpr size_t kReadBytes = 4096;
// Answers to pipelined requests a session holds before it writes them (Session::batch_).
constexpr size_t kMaxBatchBytes = 64 * 1024;
// Bounds of the period of a loop's timeout sweep (a quarter of the shortest timeout).
constexpr std::chrono::milliseconds kMinSweep{5};
constexpr std::chrono::milliseconds kMaxSweep{250};
// Body limit while reading the body of a request that has no route (it gets 404/405).
constexpr size_t kUnroutedBodyLimit = 64 * 1024;
// After a response with "Connection: close" the session half-closes and discards input for at
// most this long (or header_timeout if shorter), so that unread request bytes do not turn the
// close into a TCP reset that destroys the response before the client reads it.
constexpr std::chrono::milliseconds kMaxLinger{1000};
constexpr size_t kMaxLingerBytes = 1 << 20;
// Once drained, an event loop gets this long to run out of work before it is stopped hard.
constexpr std::chrono::milliseconds kLoopExitGrace{1000};
// Delay before accepting again after an accept error (e.g. out of file descriptors).
constexpr std::chrono::milliseconds kAcceptRetryDelay{50};
// A timeout sweep that runs this much later than its timer is logged as a loop stall.
constexpr std::chrono::milliseconds kStallLogged{50};

IpAddress ToIpAddress(const asio::ip::address& address) {
  IpAddress ip;
  if (address.is_v4()) {
    ip.bytes[10] = ip.bytes[11] = 0xff;  // ::ffff:a.b.c.d, as common/ip_address.h stores it
    auto v4 = address.to_v4().to_bytes();
    std::copy(v4.begin(), v4.end(), ip.bytes.begin() + 12);
  } else {
    ip.bytes = address.to_v6().to_bytes();
  }
  return ip;
}

struct IpAddressHash {
  size_t operator()(const IpAddress& ip) const {
    uint64_t a, b;
    std::memcpy(&a, ip.bytes.data(), 8);
    std::memcpy(&b, ip.bytes.data() + 8, 8);
    return std::hash<uint64_t>()(a * 0x9e3779b97f4a7c15ULL ^ b);
  }
};

// The generic answer of a kWorker route without RouteOptions::overloaded when the pool is full.
Response BusyResponse() {
  Response response = ErrorResponse(
      503, "Server busy",
      {{"request", "more requests are waiting than the server can answer in time; retry"}});
  response.SetHeader("Retry-After", "1");
  return response;
}

using detail::EqualsIgnoreCase;

Method ToMethod(bhttp::verb verb) {
  switch (verb) {
    case bhttp::verb::get:
      return Method::kGet;
    case bhttp::verb::head:
      return Method::kHead;
    case bhttp::verb::post:
      return Method::kPost;
    case bhttp::verb::put:
      return Method::kPut;
    case bhttp::verb::patch:
      return Method::kPatch;
    case bhttp::verb::delete_:
      return Method::kDelete;
    case bhttp::verb::options:
      return Method::kOptions;
    default:
      return Method::kOther;
  }
}

void AppendDecimal(std::string& out, uint64_t value) {
  char digits[20];
  size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (n > 0) out += digits[--n];
}

// A Beast parse error (as opposed to an I/O error, timeout or end of stream).
bool IsMalformed(const ErrorCode& ec) {
  if (ec.category() != bhttp::make_error_code(bhttp::error::bad_method).category()) return false;
  return ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message &&
         ec != bhttp::error::short_read;
}

class Session;

// One event loop with its acceptor and sessions. All members except `ioc` (post only) are
// used only on the loop's thread.
// Per-route counters of one event loop (ServerImpl::AppendMetrics): answers by status and a
// latency histogram. Only the loop's thread writes them (a relaxed load and store, no lock
// prefix); a scrape reads them from another thread.
constexpr int kStatusCodes[] = {200, 201, 204, 302, 304, 400, 401, 403, 404, 405,
                                409, 413, 415, 429, 431, 500, 503, 504};
constexpr size_t kStatusSlots = std::size(kStatusCodes) + 1;  // + "other"
// Seconds: 50 us .. 1 s; the ad path answers in tens of microseconds, the admin API in ms.
constexpr double kLatencyBounds[] = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                     0.005,   0.01,   0.025,   0.1,    0.25,  1.0};
constexpr size_t kLatencyBuckets = std::size(kLatencyBounds);
constexpr int64_t kLatencyBoundsNs[] = {50'000,    100'000,    250'000,    500'000,
                                        1'000'000, 2'500'000,  5'000'000,  10'000'000,
                                        25'000'000, 100'000'000, 250'000'000, 1'000'000'000};

size_t StatusSlot(int status) {
  for (size_t i = 0; i < std::size(kStatusCodes); ++i) {
    if (kStatusCodes[i] == status) return i;
  }
  return std::size(kStatusCodes);
}

struct RouteStats {
  std::array<std::atomic<uint64_t>, kStatusSlots> status{};
  std::array<std::atomic<uint64_t>, kLatencyBuckets + 1> latency{};  // + the +Inf bucket
  std::atomic<uint64_t> latency_ns{0};
};

void Bump(std::atomic<uint64_t>& c, uint64_t n = 1) {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

struct Loop {
  // Declared before `ioc`: sessions destroyed while `ioc` tears down unregister here.
  std::unordered_set<Session*> sessions;
  bool draining = false;
  // One thread runs the loop and every socket operation of its sessions happens on it (a
  // kWorker handler only posts its response back), so the reactor needs no per-socket locks.
  // Posting to `ioc` from other threads (Stop, workers) stays safe: the scheduler still locks.
  asio::io_context ioc{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO};
  Acceptor acceptor{ioc};
  asio::steady_timer accept_retry{ioc};
  // Timeouts: each session keeps a deadline on this loop's coarse clock, which the sweep
  // timer advances and checks every `sweep_period`, so a request sets no timer and reads no
  // clock. A deadline set `timeout` from now fires between `timeout` and timeout + 2 periods.
  asio::steady_timer sweep{ioc};
  std::chrono::milliseconds sweep_period{kMaxSweep};
  int64_t now_ms = 0;    // steady clock in ms at the last sweep (> 0)
  int64_t cpu_ns = 0;    // the loop thread's CPU time at the last sweep
  bool closing = false;  // CloseAll ran: the sweep stops rearming so the loop can run out
  detail::Admission admission;  // load shedding (ServerOptions::shed_after)
  // Open connections per client address (ServerOptions::max_connections_per_ip).
  std::unordered_map<IpAddress, int, IpAddressHash> connections_per_ip;
  int per_ip_limit = 0;  // this loop's share of max_connections_per_ip; 0 = none
  // The response being sent, shared by the loop's sessions: a response is written at once with
  // a non-blocking send, so one buffer that stays in cache serves them all (Session::Write).
  std::string out;
  // Responses sent, for the access log's one in ServerOptions::access_log_one_in.
  uint64_t responses = 0;
  // Router::route_count() + 1 entries (the last: requests no route matched or the server
  // answered before routing).
  std::unique_ptr<RouteStats[]> route_stats;
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(ioc);
  std::promise<void> exited;
  std::future<void> exited_future = exited.get_future();
  std::thread thread;

  void Tick() {
    now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now().time_since_epoch())
                 .count() +
             1;
  }
  // The deadline `timeout` from now. now_ms may be up to a period old (plus however long the
  // loop's current batch of handlers has run), hence the extra period: a deadline does not fire
  // early, except by the length of one busy batch.
  int64_t DeadlineAfter(std::chrono::milliseconds timeout) const {
    return now_ms + timeout.count() + sweep_period.count();
  }
};

class ServerImpl final : public Server {
 public:
  ServerImpl(const ServerOptions& options, const Router& router, IpSet exempt)
      : options_(options), router_(router), exempt_(std::move(exempt)) {}
  ~ServerImpl() override { Stop(); }

  Status Start() override;
  uint16_t port() const override { return port_; }
  void Stop() override;
  const ServerStats& stats() const override { return stats_; }
  uint64_t requests_answered() const override;
  void AppendMetrics(std::string& out) const override;

  // For sessions.
  const ServerOptions& options() const { return options_; }
  const Router& router() const { return router_; }
  ServerStats& mutable_stats() { return stats_; }
  asio::thread_pool& workers() { return *workers_; }
  std::atomic<int>& worker_jobs() { return worker_jobs_; }
  void OnSessionClosed();

 private:
  Status Bind(Loop& loop, const tcp::endpoint& endpoint);
  void Accept(Loop& loop);
  void OnAccept(Loop& loop, const ErrorCode& ec, Socket socket);
  static void RunLoop(Loop& loop);
  void Sweep(Loop& loop);
  static void BeginDrain(Loop& loop);
  static void CloseAll(Loop& loop);
  void WaitForDrain();
  void StopLoops();

  const ServerOptions options_;
  const Router& router_;
  IpSet exempt_;  // options_.exempt_addresses
  ServerStats stats_;
  std::atomic<int> worker_jobs_{0};  // kWorker requests queued or running
  std::atomic<bool> stopping_{false};
  Mutex drain_mu_;
  CondVar drained_;
  Mutex stop_mu_;
  bool started_ ADS_GUARDED_BY(stop_mu_) = false;
  bool stopped_ ADS_GUARDED_BY(stop_mu_) = false;
  uint16_t port_ = 0;
  std::optional<asio::thread_pool> workers_;
  // With shedding on: receive timestamps stay on between connections (detail::TimestampKeeper).
  std::optional<detail::TimestampKeeper> timestamps_;
  // Last: loops (and the sessions their handlers hold) go before anything sessions use.
  std::vector<std::unique_ptr<Loop>> loops_;
};

// Parses one request into session-owned storage: Beast's parser (the request line, fields,
// chunked framing, limits) with our own callbacks, so a request allocates nothing once the
// session's buffers have grown (beast::http::request_parser builds a field list node by node).
// The request line and header fields are copied into `text` as they are parsed, because the
// read buffer may move while the body is read; views are made once the header is complete.
class RequestParser final : public bhttp::basic_parser<true> {
 public:
  struct Storage {
    std::string text;  // target, then name and value of each field
    struct Field {
      uint32_t name, name_size, value, value_size;
    };
    std::vector<Field> fields;
    std::string body;
    bhttp::verb verb = bhttp::verb::unknown;
    unsigned version = 11;
    uint32_t target_size = 0;
    // A body past `spool_after` bytes (the route's RouteOptions::spool_after_bytes; 0 = never)
    // goes to `spool`, a file in `spool_dir`, instead of `body`. `spool_error` says why that
    // failed (the request is then answered 503).
    detail::BodySpool spool;
    size_t spool_after = 0;
    const std::string* spool_dir = nullptr;
    Status spool_error;

    void Clear() {
      // A large request (an admin upload) does not leave its buffers with the connection.
      ShrinkIfLarge(text);
      ShrinkIfLarge(body);
      text.clear();
      fields.clear();
      body.clear();
      verb = bhttp::verb::unknown;
      version = 11;
      target_size = 0;
      spool.Reset();
      spool_after = 0;
      if (!spool_error.ok()) spool_error = OkStatus();
    }
  };

  // Kept capacity of a session's request buffers between requests.
  static constexpr size_t kKeptBytes = 64 * 1024;
  static void ShrinkIfLarge(std::string& s) {
    if (s.capacity() > kKeptBytes) std::string().swap(s);
  }

  // `storage` must outlive the parser; it is cleared here.
  explicit RequestParser(Storage& storage) : storage_(storage) { storage_.Clear(); }

 private:
  static uint32_t Append(std::string& text, beast::string_view s) {
    auto offset = static_cast<uint32_t>(text.size());
    text.append(s.data(), s.size());
    return offset;
  }
  void on_request_impl(bhttp::verb method, beast::string_view, beast::string_view target,
                       int version, ErrorCode&) override {
    storage_.verb = method;
    storage_.version = static_cast<unsigned>(version);
    storage_.target_size = static_cast<uint32_t>(target.size());
    Append(storage_.text, target);
  }
  void on_response_impl(int, beast::string_view, int, ErrorCode&) override {}
  void on_field_impl(bhttp::field, beast::string_view name, beast::string_view value,
                     ErrorCode&) override {
    uint32_t n = Append(storage_.text, name);
    uint32_t v = Append(storage_.text, value);
    storage_.fields.push_back(
        {n, static_cast<uint32_t>(name.size()), v, static_cast<uint32_t>(value.size())});
  }
  void on_header_impl(ErrorCode&) override {}
  void on_body_init_impl(const boost::optional<uint64_t>& length, ErrorCode& ec) override {
    // The length was checked against the route's limit before the body is parsed.
    if (!length) return;
    if (storage_.spool_after > 0 && *length > storage_.spool_after) {
      StartSpool(ec);
    } else {
      storage_.body.reserve(static_cast<size_t>(*length));
    }
  }
  size_t on_body_impl(beast::string_view body, ErrorCode& ec) override { return Store(body, ec); }
  void on_chunk_header_impl(uint64_t, beast::string_view, ErrorCode&) override {}
  size_t on_chunk_body_impl(uint64_t, beast::string_view body, ErrorCode& ec) override {
    return Store(body, ec);
  }
  size_t Store(beast::string_view bytes, ErrorCode& ec) {
    if (storage_.spool.is_open()) {
      Status st = storage_.spool.Append({bytes.data(), bytes.size()});
      if (!st.ok()) Fail(std::move(st), ec);
      return bytes.size();
    }
    storage_.body.append(bytes.data(), bytes.size());
    // A chunked body (no length known up front) moves to the file once it passes the limit.
    if (storage_.spool_after > 0 && storage_.body.size() > storage_.spool_after) StartSpool(ec);
    return bytes.size();
  }
  // Opens the spool and moves what `body` has so far into it.
  void StartSpool(ErrorCode& ec) {
    Status st = storage_.spool.Open(*storage_.spool_dir);
    if (st.ok()) st = storage_.spool.Append(storage_.body);
    std::string().swap(storage_.body);
    if (!st.ok()) Fail(std::move(st), ec);
  }
  void Fail(Status st, ErrorCode& ec) {
    storage_.spool.Reset();
    storage_.spool_error = std::move(st);
    ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
  }
  void on_finish_impl(ErrorCode&) override {}

  Storage& storage_;
};

// One connection: reads requests one at a time (so pipelined requests are answered in order),
// dispatches them and writes the responses. Lives on its loop's thread, kept alive by its
// pending operations; a kWorker handler holds it while it runs on the pool. Its timeouts are
// deadlines checked by the loop's sweep (Loop::Sweep), not a timer per operation.
class Session : public std::enable_shared_from_this<Session> {
 public:
  // `counted_ip`: the address this connection counts against in Loop::connections_per_ip.
  Session(ServerImpl& server, Loop& loop, Socket&& socket, std::optional<IpAddress> counted_ip)
      : server_(server),
        loop_(loop),
        options_(server.options()),
        socket_(std::move(socket)),
        counted_ip_(counted_ip) {
    loop_.sessions.insert(this);
    server_.mutable_stats().connections_open.fetch_add(1, std::memory_order_relaxed);
    request_.headers.reserve(16);
    request_.params.reserve(4);
    boost::system::error_code ec;
    tcp::endpoint peer = socket_.remote_endpoint(ec);
    if (!ec) remote_ip_ = peer.address().to_string();
    storage_.fields.reserve(16);
    storage_.text.reserve(1024);
  }
  ~Session() {
    loop_.sessions.erase(this);
    if (counted_ip_) {
      auto it = loop_.connections_per_ip.find(*counted_ip_);
      if (it != loop_.connections_per_ip.end() && --it->second <= 0) {
        loop_.connections_per_ip.erase(it);
      }
    }
    server_.OnSessionClosed();
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void Start() { WaitForRequest(); }
  // Server is stopping: close now unless a request is in progress (that one finishes and its
  // response carries "Connection: close").
  void OnDrain() {
    if (state_ == State::kIdle || state_ == State::kLingering) Close();
  }
  void ForceClose() { Close(); }
  // Called by the loop's sweep: closes the connection if its deadline has passed.
  void CheckDeadline(int64_t now_ms) {
    if (deadline_ms_ != 0 && deadline_ms_ <= now_ms) Close();
  }

 private:
  enum class State : uint8_t { kIdle, kReading, kHandling, kWriting, kLingering, kClosed };

  void ExpiresAfter(std::chrono::milliseconds timeout) {
    deadline_ms_ = loop_.DeadlineAfter(timeout);
  }
  void WaitForRequest();
  // Resets the parser and the request id for the next request on the connection.
  void NextRequest();
  void Read();
  // Writes the batched responses (if any), then reads more of the current request.
  void FlushThenRead();
  void ReadStamped();
  void OnRead(const ErrorCode& ec, size_t bytes);
  void Parse();
  bool OnHeader();
  void SendContinue();
  void OnParseError(const ErrorCode& ec);
  void BuildRequest();
  void Dispatch();
  Response Invoke() const;
  Response InvokeOverloaded() const;
  Response RouteError() const;
  void Respond(Response&& response);
  // The current request's id, made now if it has none yet (a request rejected while parsing).
  std::string_view RequestId();
  void Reject(int status, std::string_view message, std::vector<FieldError> details);
  void RejectBody();
  void Refuse(Response&& response);
  void PrepareResponse(Response&& response, unsigned version, bool keep_alive, bool head);
  void Write(bool keep_alive);
  // One non-blocking send of `out`; `sent` = the bytes the socket took (0 if it would block).
  // False on a socket error.
  bool SendNow(const std::string& out, size_t& sent);
  void OnWrite(const ErrorCode& ec, bool keep_alive);
  void Linger();
  void DiscardInput();
  void Close();

  ServerImpl& server_;
  Loop& loop_;
  const ServerOptions& options_;
  Socket socket_;
  beast::flat_buffer buffer_;
  RequestParser::Storage storage_;
  std::optional<RequestParser> parser_;
  bool header_done_ = false;  // OnHeader ran for the current request
  Request request_;
  std::string remote_ip_;  // the peer's address, for Request::remote_ip
  std::optional<IpAddress> counted_ip_;
  Router::Match match_;
  size_t body_limit_ = 0;
  std::string unsent_;  // the part of a response the socket did not take at once (Write)
  // Answers to pipelined requests not written yet: while the next request is already buffered,
  // an inline answer is appended here and the next request handled at once, so that a client
  // that pipelines gets its answers in one send instead of one each (Respond). At most
  // kMaxBatchBytes; written before the connection waits for more bytes.
  std::string batch_;
  bool dispatching_ = false;  // Dispatch runs from Parse: an inline answer may be batched
  bool batched_ = false;      // Respond batched the answer; Parse goes on with the next request
  int served_ = 0;
  size_t lingered_bytes_ = 0;
  int64_t deadline_ms_ = 0;  // Loop::now_ms clock; 0 = none
  // Load shedding (ServerOptions::shed_after): a read after one that filled its buffer waited
  // since then at least (ReadStamped).
  std::chrono::steady_clock::time_point last_read_{};  // the last stamped read
  bool last_read_full_ = false;                         // it filled its buffer
  State state_ = State::kIdle;
  // The current request's id (Request::request_id); 0 bytes until it has one.
  std::array<char, detail::kMaxRequestIdBytes> request_id_;
  uint8_t request_id_size_ = 0;
  std::chrono::steady_clock::time_point started_;  // Dispatch: the request's handling began
};

std::string_view Session::RequestId() {
  if (request_id_size_ == 0) {
    detail::MakeRequestId(request_id_.data());
    request_id_size_ = detail::kMadeRequestIdBytes;
  }
  return std::string_view(request_id_.data(), request_id_size_);
}

void Session::NextRequest() {
  request_id_size_ = 0;
  parser_.emplace(storage_);
  parser_->header_limit(static_cast<uint32_t>(
      std::min<size_t>(options_.max_header_bytes, std::numeric_limits<uint32_t>::max())));
  // The route decides the body limit once the header is in (see OnHeader).
  parser_->body_limit(boost::none);
  header_done_ = false;
}

void Session::WaitForRequest() {
  if (loop_.draining) return Close();
  NextRequest();
  if (buffer_.size() > 0) {  // pipelined request already buffered
    state_ = State::kReading;
    ExpiresAfter(options_.header_timeout);
    return Parse();
  }
  // The header timeout runs from the first byte; until then the connection is idle.
  state_ = State::kIdle;
  ExpiresAfter(options_.idle_timeout);
  Read();
}

void Session::Read() {
  if (options_.shed_after.count() > 0) {
    // Through the loop's queue, as asio's own read completes, so one busy connection cannot
    // keep the loop to itself.
    return asio::post(socket_.get_executor(),
                      [self = shared_from_this()] { self->ReadStamped(); });
  }
  socket_.async_read_some(
      buffer_.prepare(kReadBytes),
      [self = shared_from_this()](const ErrorCode& ec, size_t bytes) { self->OnRead(ec, bytes); });
}

bool Session::SendNow(const std::string& out, size_t& sent) {
  ErrorCode ec;
  sent = socket_.write_some(asio::buffer(out), ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) {
    sent = 0;
    return true;
  }
  return !ec;
}

void Session::FlushThenRead() {
  if (batch_.empty()) return Read();
  size_t sent = 0;
  if (!SendNow(batch_, sent)) return Close();
  if (sent == batch_.size()) {
    batch_.clear();
    return Read();
  }
  unsent_.assign(batch_, sent);
  batch_.clear();
  // The sweep's deadline (header or body timeout, already running) bounds this write too.
  asio::async_write(socket_, asio::buffer(unsent_),
                    [self = shared_from_this()](const ErrorCode& ec, size_t) {
                      if (self->state_ == State::kClosed) return;
                      if (ec) return self->Close();
                      self->unsent_.clear();
                      self->Read();
                    });
}

// Read() with shedding on: recvmsg with the kernel's receive timestamp; waits for the socket
// only once it has nothing (epoll is edge-triggered: it reports new bytes, not bytes left).
void Session::ReadStamped() {
  if (state_ == State::kClosed) return;
  auto space = buffer_.prepare(kReadBytes);
  detail::StampedRecv read =
      detail::RecvStamped(socket_.native_handle(), space.data(), space.size());
  if (read.bytes < 0 && (read.error == EAGAIN || read.error == EWOULDBLOCK)) {
    socket_.async_wait(Socket::wait_read, [self = shared_from_this()](const ErrorCode& ec) {
      if (self->state_ == State::kClosed) return;
      if (ec) return self->Close();
      self->ReadStamped();
    });
    return;
  }
  if (read.bytes <= 0) return Close();  // end of stream or an error
  // Unstamped (not expected on TCP): counted as arrived now.
  int64_t waited = std::max<int64_t>(read.waited_ns, 0);
  const auto now = std::chrono::steady_clock::now();
  // The kernel merges segments that queue on a socket into one buffer stamped with the newest,
  // so under a backlog the stamp is too recent. A previous read that filled its buffer left
  // bytes behind: everything read now was there already, and waited since then at least.
  if (last_read_full_) {
    waited = std::max<int64_t>(
        waited, std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_read_).count());
  }
  last_read_ = now;
  last_read_full_ = static_cast<size_t>(read.bytes) == space.size();
  loop_.admission.OnRead(
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count(), waited);
  OnRead({}, static_cast<size_t>(read.bytes));
}

void Session::OnRead(const ErrorCode& ec, size_t bytes) {
  if (state_ == State::kClosed) return;
  // End of stream, reset, or closed by the sweep: nothing useful can be sent.
  if (ec) return Close();
  buffer_.commit(bytes);
  if (state_ == State::kIdle) {
    state_ = State::kReading;
    ExpiresAfter(options_.header_timeout);
  }
  Parse();
}

void Session::Parse() {
  for (;;) {
    ErrorCode ec;
    size_t used = parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    if (ec == bhttp::error::need_more) return FlushThenRead();
    if (ec) return OnParseError(ec);
    if (!header_done_ && parser_->is_header_done()) {
      header_done_ = true;
      if (!OnHeader()) return;
    }
    if (parser_->is_done()) {
      dispatching_ = true;
      Dispatch();
      dispatching_ = false;
      if (!batched_) return;
      batched_ = false;  // answered into batch_; the next request is already buffered
      continue;
    }
    // Nothing left, or nothing the parser could use without more bytes.
    if (buffer_.size() == 0 || used == 0) return FlushThenRead();
  }
}

// The header is in: routes the request, lets the route refuse it (admit) and decides its body
// limit. False when it answered (a refusal, 413) or started an interim response; the parse
// goes on otherwise.
bool Session::OnHeader() {
  BuildRequest();
  match_ = server_.router().Find(request_);
  if (match_.handler != nullptr && match_.options->admit) {
    if (std::optional<Response> refused = match_.options->admit(request_)) {
      Refuse(std::move(*refused));
      return false;
    }
  }
  body_limit_ = match_.handler != nullptr ? match_.options->max_body_bytes : kUnroutedBodyLimit;
  boost::optional<uint64_t> length = parser_->content_length();
  if (length && *length > body_limit_) {
    RejectBody();
    return false;
  }
  if (parser_->is_done()) return true;
  parser_->body_limit(body_limit_);
  if (match_.handler != nullptr && match_.options->spool_after_bytes > 0) {
    storage_.spool_after = match_.options->spool_after_bytes;
    storage_.spool_dir = &options_.spool_dir;
  }
  parser_->eager(true);
  ExpiresAfter(options_.body_timeout);
  if (storage_.version >= 11 && EqualsIgnoreCase(request_.Header("Expect"), "100-continue")) {
    SendContinue();
    return false;
  }
  return true;
}

void Session::SendContinue() {
  static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  // Earlier pipelined answers still batched go first.
  unsent_.assign(batch_);
  unsent_ += kContinue;
  batch_.clear();
  asio::async_write(socket_, asio::buffer(unsent_),
                    [self = shared_from_this()](const ErrorCode& ec, size_t) {
                      if (self->state_ == State::kClosed) return;
                      if (ec) return self->Close();
                      self->unsent_.clear();
                      // Part of the body may have arrived with the header.
                      if (self->buffer_.size() > 0) return self->Parse();
                      self->Read();
                    });
}

void Session::OnParseError(const ErrorCode& ec) {
  if (ec == bhttp::error::header_limit) {
    return Reject(431, "Request header too large",
                  {{"header", "request header exceeds the limit " +
                                  std::to_string(options_.max_header_bytes) + " bytes"}});
  }
  if (ec == bhttp::error::body_limit) return RejectBody();
  if (!storage_.spool_error.ok()) {
    ADS_LOG(error, "cannot store a request body", "request_id", RequestId(), "error",
            storage_.spool_error.message());
    return Reject(503, "Cannot store the request body",
                  {{"body", "the server could not store it"}});
  }
  if (IsMalformed(ec)) {
    return Reject(400, "Malformed HTTP request", {{"request", ec.message()}});
  }
  Close();
}

void Session::BuildRequest() {
  const std::string& text = storage_.text;
  request_.method = ToMethod(storage_.verb);
  request_.remote_ip = remote_ip_;
  request_.target = std::string_view(text.data(), storage_.target_size);
  size_t question = request_.target.find('?');
  request_.path = request_.target.substr(0, question);
  request_.query = question == std::string_view::npos ? std::string_view()
                                                      : request_.target.substr(question + 1);
  request_.headers.clear();
  for (const RequestParser::Storage::Field& f : storage_.fields) {
    std::string_view name(text.data() + f.name, f.name_size);
    std::string_view value(text.data() + f.value, f.value_size);
    request_.headers.push_back({name, value});
    if (name.size() == 12 && request_id_size_ == 0 && EqualsIgnoreCase(name, "x-request-id") &&
        detail::IsValidRequestId(value)) {
      std::memcpy(request_id_.data(), value.data(), value.size());
      request_id_size_ = static_cast<uint8_t>(value.size());
    }
  }
  request_.request_id = RequestId();
  request_.body = {};
}

void Session::Dispatch() {
  started_ = std::chrono::steady_clock::now();
  state_ = State::kHandling;
  deadline_ms_ = 0;
  request_.body = std::string_view(storage_.body.data(), storage_.body.size());
  if (storage_.spool.is_open()) {
    Result<std::string_view> mapped = storage_.spool.Map();
    if (!mapped.ok()) {
      ADS_LOG(error, "cannot map a request body", "request_id", request_.request_id, "error",
              mapped.status().message());
      return Respond(ErrorResponse(503, "Cannot store the request body",
                                   {{"body", "the server could not store it"}}));
    }
    request_.body = *mapped;
  }
  if (match_.handler == nullptr) return Respond(RouteError());
  // Shedding (detail/admission.h): the loop's controller admits the share it can serve in time.
  if (options_.shed_after.count() > 0 && match_.options->overloaded &&
      !loop_.admission.Admit()) {
    return Respond(InvokeOverloaded());
  }
  if (match_.options->dispatch == Dispatch::kInline) return Respond(Invoke());
  if (match_.deferred != nullptr) {
    // The session stays alive in the responder; no I/O runs on the connection until the
    // response is posted back to this loop. A handler may keep copies of the responder and drop
    // them on its own thread: the session still ends on this loop (detail/loop_bound.h).
    Responder respond = [hold = detail::LoopBound<Session, Executor>(
                             shared_from_this(), socket_.get_executor())](Response response) mutable {
      std::shared_ptr<Session> self = hold.Take();
      if (self == nullptr) return;  // this copy answered already
      asio::post(hold.executor(),
                 [self = std::move(self), response = std::move(response)]() mutable {
                   self->Respond(std::move(response));
                 });
    };
    try {
      (*match_.deferred)(request_, std::move(respond));
    } catch (const std::exception& e) {
      // A deferred handler must not throw; it may or may not have answered, so the connection
      // cannot be trusted to continue.
      ADS_LOG(error, "deferred http handler threw", "request_id", request_.request_id, "route",
              match_.pattern, "what", e.what());
      Close();
    }
    return;
  }
  // A full pool answers at once rather than queueing what cannot be answered in time.
  if (server_.worker_jobs().fetch_add(1, std::memory_order_relaxed) >= options_.max_worker_queue) {
    server_.worker_jobs().fetch_sub(1, std::memory_order_relaxed);
    if (match_.options->overloaded) return Respond(InvokeOverloaded());
    server_.mutable_stats().requests_shed.fetch_add(1, std::memory_order_relaxed);
    return Respond(BusyResponse());
  }
  // The session (and with it the storage that owns the request bytes) stays alive in the job.
  // No I/O runs on the connection meanwhile, so the worker has the request to itself.
  asio::post(
      server_.workers(), [self = shared_from_this(), executor = socket_.get_executor()]() mutable {
        Response response = self->Invoke();
        self->server_.worker_jobs().fetch_sub(1, std::memory_order_relaxed);
        // Moving `self` into the posted handler drops the session on its own loop.
        asio::post(executor, [self = std::move(self), response = std::move(response)]() mutable {
          self->Respond(std::move(response));
        });
      });
}

Response Session::Invoke() const {
  try {
    return (*match_.handler)(request_);
  } catch (const std::exception& e) {
    ADS_LOG(error, "http handler threw", "request_id", request_.request_id, "method",
            MethodName(request_.method), "route", match_.pattern, "what", e.what());
  } catch (...) {
    ADS_LOG(error, "http handler threw", "request_id", request_.request_id, "method",
            MethodName(request_.method), "route", match_.pattern);
  }
  return ErrorResponse(500, "Internal server error");
}

Response Session::InvokeOverloaded() const {
  server_.mutable_stats().requests_shed.fetch_add(1, std::memory_order_relaxed);
  try {
    return match_.options->overloaded(request_);
  } catch (const std::exception& e) {
    ADS_LOG(error, "http overload handler threw", "what", e.what());
  }
  return BusyResponse();
}

Response Session::RouteError() const {
  if (match_.status != 405) return ErrorResponse(404, "Not found");
  Response response = ErrorResponse(405, "Method not allowed");
  response.SetHeader("Allow", match_.allow);
  return response;
}

void Session::Respond(Response&& response) {
  if (state_ == State::kClosed) return;  // force-closed while a worker ran the handler
  // The handler is done with the body: a spooled one's file goes now, not at the next request.
  storage_.spool.Reset();
  ++served_;
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now() - started_)
                         .count();
  {
    RouteStats& stats = loop_.route_stats[match_.route];
    Bump(stats.status[StatusSlot(response.status)]);
    size_t bucket = 0;
    while (bucket < kLatencyBuckets && ns > kLatencyBoundsNs[bucket]) ++bucket;
    Bump(stats.latency[bucket]);
    Bump(stats.latency_ns, static_cast<uint64_t>(std::max<int64_t>(ns, 0)));
  }
  if (options_.access_log_one_in > 0 &&
      ++loop_.responses % static_cast<uint64_t>(options_.access_log_one_in) == 0) {
    const int64_t us = ns / 1000;
    // The route's pattern, never the path: click tokens and ids stay out of the log.
    ADS_LOG(info, "request", "request_id", RequestId(), "method", MethodName(request_.method),
            "route", match_.pattern.empty() ? std::string_view("(none)") : match_.pattern,
            "status", response.status, "us", us, "keep_alive", parser_->keep_alive());
  }
  bool keep_alive =
      parser_->keep_alive() && served_ < options_.max_requests_per_connection && !loop_.draining;
  PrepareResponse(std::move(response), storage_.version, keep_alive,
                  request_.method == Method::kHead);
  // Pipelined: the next request is already here, so this answer can wait for it (in order).
  if (dispatching_ && keep_alive && buffer_.size() > 0 &&
      batch_.size() + loop_.out.size() <= kMaxBatchBytes) {
    batch_ += loop_.out;
    NextRequest();
    state_ = State::kReading;
    ExpiresAfter(options_.header_timeout);
    batched_ = true;
    return;
  }
  Write(keep_alive);
}

void Session::Reject(int status, std::string_view message, std::vector<FieldError> details) {
  // Answered before routing (bad framing, limits): the no-route entry, no latency.
  Bump(loop_.route_stats[server_.router().route_count()].status[StatusSlot(status)]);
  unsigned version = parser_->is_header_done() ? storage_.version : 11;
  PrepareResponse(ErrorResponse(status, message, details), version, /*keep_alive=*/false,
                  /*head=*/false);
  Write(/*keep_alive=*/false);
}

// An answer the route decided from the header alone (RouteOptions::admit): sent at once, then
// the connection closes, the body (if any) never read.
void Session::Refuse(Response&& response) {
  Bump(loop_.route_stats[match_.route].status[StatusSlot(response.status)]);
  PrepareResponse(std::move(response), storage_.version, /*keep_alive=*/false,
                  request_.method == Method::kHead);
  Write(/*keep_alive=*/false);
}

void Session::RejectBody() {
  Reject(413, "Request body too large",
         {{"body", "request body exceeds the limit " + std::to_string(body_limit_) + " bytes"}});
}

void Session::PrepareResponse(Response&& response, unsigned version, bool keep_alive, bool head) {
  // string_view literals: appending a `const char*` makes std::string::append call strlen.
  using namespace std::string_view_literals;
  int status = response.status >= 100 && response.status <= 999 ? response.status : 500;
  // 1xx, 204 and 304 have no body and no Content-Length (RFC 9110 8.6).
  bool bodiless = status < 200 || status == 204 || status == 304;
  // The whole response goes out as one buffer, the loop's (no per-response allocation once it
  // has grown, one send call).
  std::string& out = loop_.out;
  out.clear();
  out += version >= 11 ? "HTTP/1.1 "sv : "HTTP/1.0 "sv;
  AppendDecimal(out, static_cast<uint64_t>(status));
  out += ' ';
  beast::string_view reason = bhttp::obsolete_reason(static_cast<bhttp::status>(status));
  out.append(reason.data(), reason.size());
  out += "\r\n"sv;
  // Response::SetHeader has dropped any framing header of the handler's.
  out += response.header_lines();
  out += "X-Request-Id: "sv;
  out += RequestId();
  // Every answer (issue 39): browsers never guess another type than the one given.
  out += "\r\nX-Content-Type-Options: nosniff\r\n"sv;
  if (!bodiless) {
    // HEAD: the Content-Length of the GET response, no body.
    out += "Content-Length: "sv;
    AppendDecimal(out, response.body.size());
    out += "\r\n"sv;
  }
  // As Beast frames it: HTTP/1.1 is persistent unless "close", HTTP/1.0 only with "keep-alive".
  if (version >= 11 && !keep_alive) out += "Connection: close\r\n"sv;
  if (version < 11 && keep_alive) out += "Connection: keep-alive\r\n"sv;
  out += "\r\n"sv;
  if (!bodiless && !head) out += response.body;
}

// Sends loop_.out with one non-blocking send. The socket nearly always takes a whole response,
// which then needs no asynchronous operation; the rest of a response it did not take is kept by
// the session and written asynchronously (a client that does not read is cut off like one that
// does not send).
void Session::Write(bool keep_alive) {
  state_ = State::kWriting;
  if (!batch_.empty()) batch_ += loop_.out;  // after the batched answers, in order
  const std::string& out = batch_.empty() ? loop_.out : batch_;
  size_t sent = 0;
  if (!SendNow(out, sent)) return Close();
  const bool whole = sent == out.size();
  if (!whole) unsent_.assign(out, sent);
  batch_.clear();
  // A large admin response does not leave its buffer with the loop or the session.
  RequestParser::ShrinkIfLarge(loop_.out);
  RequestParser::ShrinkIfLarge(batch_);
  if (whole) {
    // Continue from the loop, after the handlers it already has: reading the next request
    // right away would nearly always find nothing yet (a wasted recv per request), and a
    // pipelined request already buffered would be answered from here, growing the stack.
    asio::post(socket_.get_executor(),
               [self = shared_from_this(), keep_alive] { self->OnWrite({}, keep_alive); });
    return;
  }
  ExpiresAfter(options_.body_timeout);
  asio::async_write(socket_, asio::buffer(unsent_),
                    [self = shared_from_this(), keep_alive](const ErrorCode& ec, size_t) {
                      self->OnWrite(ec, keep_alive);
                    });
}

void Session::OnWrite(const ErrorCode& ec, bool keep_alive) {
  if (state_ == State::kClosed) return;
  if (ec) return Close();
  RequestParser::ShrinkIfLarge(unsent_);
  unsent_.clear();
  if (!keep_alive) return Linger();
  WaitForRequest();
}

void Session::Linger() {
  if (loop_.draining) return Close();
  state_ = State::kLingering;
  ErrorCode ec;
  socket_.shutdown(Socket::shutdown_send, ec);
  if (ec) return Close();
  lingered_bytes_ = 0;
  ExpiresAfter(std::min<std::chrono::milliseconds>(options_.header_timeout, kMaxLinger));
  DiscardInput();
}

void Session::DiscardInput() {
  buffer_.clear();
  socket_.async_read_some(buffer_.prepare(kReadBytes),
                          [self = shared_from_this()](const ErrorCode& ec, size_t bytes) {
                            if (self->state_ == State::kClosed) return;
                            self->lingered_bytes_ += bytes;
                            if (ec || self->lingered_bytes_ > kMaxLingerBytes) return self->Close();
                            self->DiscardInput();
                          });
}

void Session::Close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  ErrorCode ec;
  deadline_ms_ = 0;
  socket_.shutdown(Socket::shutdown_both, ec);
  socket_.close(ec);
}

uint64_t ServerImpl::requests_answered() const {
  uint64_t n = 0;
  for (const auto& loop : loops_) {
    for (size_t r = 0; r <= router_.route_count(); ++r) {
      for (const std::atomic<uint64_t>& c : loop->route_stats[r].status) {
        n += c.load(std::memory_order_relaxed);
      }
    }
  }
  return n;
}

void ServerImpl::AppendMetrics(std::string& out) const {
  MetricsText m(out);
  const std::vector<Router::RouteInfo> routes = router_.Routes();
  auto route_labels = [&](size_t r) -> std::pair<std::string_view, std::string_view> {
    if (r < routes.size()) return {MethodName(routes[r].method), routes[r].pattern};
    return {"", "(none)"};
  };
  m.Family("adserver_http_requests_total", "counter",
           "Answers by route (pattern), method and status; route (none): no route matched or "
           "the server answered before routing.");
  for (size_t r = 0; r <= routes.size(); ++r) {
    auto [method, pattern] = route_labels(r);
    for (size_t slot = 0; slot < kStatusSlots; ++slot) {
      uint64_t n = 0;
      for (const auto& loop : loops_) n += loop->route_stats[r].status[slot].load(std::memory_order_relaxed);
      if (n == 0) continue;
      std::string code =
          slot < std::size(kStatusCodes) ? std::to_string(kStatusCodes[slot]) : "other";
      m.Sample("adserver_http_requests_total",
               {{"route", pattern}, {"method", method}, {"status", code}}, n);
    }
  }
  m.Family("adserver_http_request_duration_seconds", "histogram",
           "Time from a request's dispatch to its answer being written, by route.");
  for (size_t r = 0; r < routes.size(); ++r) {
    std::array<uint64_t, kLatencyBuckets + 1> counts{};
    uint64_t ns = 0, total = 0;
    for (const auto& loop : loops_) {
      const RouteStats& stats = loop->route_stats[r];
      for (size_t b = 0; b <= kLatencyBuckets; ++b) {
        uint64_t n = stats.latency[b].load(std::memory_order_relaxed);
        counts[b] += n;
        total += n;
      }
      ns += stats.latency_ns.load(std::memory_order_relaxed);
    }
    if (total == 0) continue;
    auto [method, pattern] = route_labels(r);
    m.Histogram("adserver_http_request_duration_seconds", {{"route", pattern}, {"method", method}},
                kLatencyBounds, kLatencyBuckets, counts.data(), static_cast<double>(ns) / 1e9);
  }
  m.Family("adserver_http_connections_open", "gauge", "Open client connections.");
  m.Sample("adserver_http_connections_open", {},
           static_cast<int64_t>(stats_.connections_open.load(std::memory_order_relaxed)));
  m.Family("adserver_http_connections_accepted_total", "counter", "Connections accepted.");
  m.Sample("adserver_http_connections_accepted_total", {},
           stats_.connections_accepted.load(std::memory_order_relaxed));
  m.Family("adserver_http_connections_rejected_total", "counter",
           "Connections closed right after accept, by cause.");
  m.Sample("adserver_http_connections_rejected_total", {{"cause", "max_connections"}},
           stats_.connections_rejected.load(std::memory_order_relaxed));
  m.Sample("adserver_http_connections_rejected_total", {{"cause", "max_connections_per_ip"}},
           stats_.connections_rejected_ip.load(std::memory_order_relaxed));
  m.Family("adserver_http_requests_shed_total", "counter",
           "Requests answered with their route's overload answer (load shedding, full pool).");
  m.Sample("adserver_http_requests_shed_total", {},
           stats_.requests_shed.load(std::memory_order_relaxed));
  m.Family("adserver_http_loop_stalls_total", "counter",
           "Timeout sweeps that ran 50 ms or more late: an event loop busy or off its CPU that "
           "long (each is logged with the loop's CPU time).");
  m.Sample("adserver_http_loop_stalls_total", {},
           stats_.loop_stalls.load(std::memory_order_relaxed));
  m.Family("adserver_http_loop_stall_longest_seconds", "gauge",
           "Longest event loop stall since start (0 if none reached 50 ms).");
  m.Sample("adserver_http_loop_stall_longest_seconds", {},
           static_cast<double>(stats_.loop_stall_longest_us.load(std::memory_order_relaxed)) / 1e6);
  m.Family("adserver_http_worker_jobs", "gauge", "Requests queued for or running on the worker pool.");
  m.Sample("adserver_http_worker_jobs", {},
           static_cast<int64_t>(worker_jobs_.load(std::memory_order_relaxed)));
}

Status ServerImpl::Start() {
  MutexLock lock(stop_mu_);
  if (started_ || stopped_) return InvalidArgumentError("http server already started");
  ADS_ASSIGN_OR_RETURN(detail::ListenAddress listen, detail::ParseListenAddress(options_.listen));
  tcp::endpoint endpoint(asio::ip::make_address(listen.host), listen.port);

  if (options_.shed_after.count() > 0 && !timestamps_.emplace().ok()) {
    ADS_LOG(warn, "receive timestamps cannot be kept on; a connection after an idle spell may "
            "read its first requests unstamped (counted as not waiting)", "error",
            std::strerror(errno));
  }
  // 0: one loop per CPU this process may use (affinity mask and cgroup quota), not per host core.
  int loops = options_.io_threads > 0 ? options_.io_threads : UsableCpus();
  loops = std::max(loops, 1);
  for (int i = 0; i < loops; ++i) {
    loops_.push_back(std::make_unique<Loop>());
    loops_.back()->route_stats = std::make_unique<RouteStats[]>(router_.route_count() + 1);
    Status bound = Bind(*loops_.back(), endpoint);
    if (!bound.ok()) {
      loops_.clear();
      return bound;
    }
    // With port 0 the first bind picks the port; the others share it through SO_REUSEPORT.
    if (i == 0) endpoint.port(loops_.back()->acceptor.local_endpoint().port());
  }
  port_ = endpoint.port();
  workers_.emplace(static_cast<size_t>(std::max(options_.worker_threads, 1)));
  const std::chrono::milliseconds shortest =
      std::min({options_.header_timeout, options_.body_timeout, options_.idle_timeout});
  size_t loop_number = 0;
  for (auto& loop : loops_) {
    loop->sweep_period = std::clamp(shortest / 4, kMinSweep, kMaxSweep);
    loop->admission = detail::Admission(options_.shed_after);
    loop->per_ip_limit = options_.max_connections_per_ip > 0
                             ? (options_.max_connections_per_ip + loops - 1) / loops
                             : 0;
    loop->Tick();
    Sweep(*loop);
    Accept(*loop);
    loop->thread = std::thread([l = loop.get(), i = loop_number++] {
      NameThisThread("http-" + std::to_string(i));
      RunLoop(*l);
    });
  }
  started_ = true;
  ADS_LOG(info, "http server listening", "listen", options_.listen, "port", port_, "io_threads",
          loops, "worker_threads", std::max(options_.worker_threads, 1));
  return OkStatus();
}

Status ServerImpl::Bind(Loop& loop, const tcp::endpoint& endpoint) {
  ErrorCode ec;
  Acceptor& acceptor = loop.acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.set_option(ReusePort(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) return OkStatus();
  return UnavailableError("cannot listen on " + options_.listen + ": " + ec.message());
}

void ServerImpl::Accept(Loop& loop) {
  loop.acceptor.async_accept(
      [this, &loop](const ErrorCode& ec, Socket socket) { OnAccept(loop, ec, std::move(socket)); });
}

void ServerImpl::OnAccept(Loop& loop, const ErrorCode& ec, Socket socket) {
  if (!loop.acceptor.is_open() || ec == asio::error::operation_aborted) return;
  if (ec) {
    ADS_LOG(warn, "http accept failed", "error", ec.message());
    loop.accept_retry.expires_after(kAcceptRetryDelay);
    loop.accept_retry.async_wait([this, &loop](const ErrorCode& wait_ec) {
      if (!wait_ec && loop.acceptor.is_open()) Accept(loop);
    });
    return;
  }
  ErrorCode ignored;
  std::optional<IpAddress> counted_ip;
  bool over_ip_limit = false;
  if (loop.per_ip_limit > 0) {
    tcp::endpoint peer = socket.remote_endpoint(ignored);
    IpAddress ip = ToIpAddress(peer.address());
    if (!ignored && !exempt_.Contains(ip)) {
      int& open = loop.connections_per_ip[ip];
      if (open >= loop.per_ip_limit) {
        over_ip_limit = true;
      } else {
        ++open;
        counted_ip = ip;
      }
    }
  }
  if (over_ip_limit) {
    stats_.connections_rejected_ip.fetch_add(1, std::memory_order_relaxed);
    socket.close(ignored);
  } else if (stats_.connections_open.load(std::memory_order_relaxed) >= options_.max_connections) {
    stats_.connections_rejected.fetch_add(1, std::memory_order_relaxed);
    if (counted_ip && --loop.connections_per_ip[*counted_ip] <= 0) {
      loop.connections_per_ip.erase(*counted_ip);
    }
    socket.close(ignored);
  } else {
    stats_.connections_accepted.fetch_add(1, std::memory_order_relaxed);
    socket.set_option(tcp::no_delay(true), ignored);
    // Session::Write sends without waiting; a socket that cannot take a response says so.
    socket.non_blocking(true, ignored);
    // Shedding is driven by how long requests' bytes waited in the kernel (Session::ReadStamped).
    if (options_.shed_after.count() > 0 &&
        !detail::EnableReceiveTimestamps(socket.native_handle())) {
      ADS_LOG(warn, "SO_TIMESTAMPNS refused; this connection is never shed", "error",
              std::strerror(errno));
    }
    std::make_shared<Session>(*this, loop, std::move(socket), counted_ip)->Start();
  }
  Accept(loop);
}

// Thread CPU time of the calling thread in ns (one system call; run once per sweep).
int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void ServerImpl::Sweep(Loop& loop) {
  loop.sweep.expires_after(loop.sweep_period);
  loop.sweep.async_wait([this, &loop](const ErrorCode& ec) {
    if (ec || loop.closing) return;
    // How late the sweep runs is how long the loop was busy or off its CPU: a stall every
    // request on the loop waited out. The loop's CPU time since the previous sweep tells the
    // two apart (on the CPU: a handler ran long; off it: blocked or preempted).
    const auto now = std::chrono::steady_clock::now();
    const int64_t cpu_ns = ThreadCpuNs();
    const auto late =
        std::chrono::duration_cast<std::chrono::microseconds>(now - loop.sweep.expiry());
    if (late >= kStallLogged) {
      const uint64_t late_us = static_cast<uint64_t>(late.count());
      stats_.loop_stalls.fetch_add(1, std::memory_order_relaxed);
      uint64_t longest = stats_.loop_stall_longest_us.load(std::memory_order_relaxed);
      while (late_us > longest && !stats_.loop_stall_longest_us.compare_exchange_weak(
                                      longest, late_us, std::memory_order_relaxed)) {
      }
      ADS_LOG(warn, "http event loop stalled", "late_ms", late.count() / 1000, "since_last_ms",
              std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch())
                      .count() -
                  loop.now_ms + 1,
              "cpu_ms", (cpu_ns - loop.cpu_ns) / 1'000'000);
    }
    loop.cpu_ns = cpu_ns;
    loop.Tick();
    // Close() only starts the close; sessions leave the set later from their handlers.
    for (Session* session : loop.sessions) session->CheckDeadline(loop.now_ms);
    Sweep(loop);
  });
}

void ServerImpl::RunLoop(Loop& loop) {
  for (;;) {
    try {
      loop.ioc.run();
      break;
    } catch (const std::exception& e) {
      ADS_LOG(error, "http event loop error", "what", e.what());
    }
  }
  loop.exited.set_value();
}

void ServerImpl::OnSessionClosed() {
  // seq_cst pairs with Stop(): either it sees the decrement or we see stopping_.
  stats_.connections_open.fetch_sub(1);
  if (stopping_.load()) {
    MutexLock lock(drain_mu_);
    drained_.NotifyAll();
  }
}

void ServerImpl::BeginDrain(Loop& loop) {
  loop.draining = true;
  ErrorCode ignored;
  loop.acceptor.close(ignored);
  loop.accept_retry.cancel();
  // Close() only starts the close; sessions leave the set later from their handlers.
  for (Session* session : loop.sessions) session->OnDrain();
}

void ServerImpl::CloseAll(Loop& loop) {
  loop.closing = true;
  loop.sweep.cancel();
  for (Session* session : loop.sessions) session->ForceClose();
}

void ServerImpl::WaitForDrain() {
  auto deadline = std::chrono::steady_clock::now() + options_.drain_timeout;
  MutexLock lock(drain_mu_);
  bool drained = drained_.WaitUntil(drain_mu_, deadline, [this]() ADS_REQUIRES(drain_mu_) {
    return stats_.connections_open.load() == 0;
  });
  if (!drained) {
    ADS_LOG(warn, "http drain timed out; closing connections", "open",
            stats_.connections_open.load());
  }
}

void ServerImpl::StopLoops() {
  for (auto& loop : loops_) asio::post(loop->ioc, [l = loop.get()] { CloseAll(*l); });
  // Running handlers cannot be interrupted; their responses go to closed sockets.
  workers_->join();
  for (auto& loop : loops_) loop->work.reset();
  auto deadline = std::chrono::steady_clock::now() + kLoopExitGrace;
  for (auto& loop : loops_) {
    if (loop->exited_future.wait_until(deadline) != std::future_status::ready) loop->ioc.stop();
    loop->thread.join();
  }
}

void ServerImpl::Stop() {
  MutexLock lock(stop_mu_);
  if (stopped_) return;
  stopped_ = true;
  if (!started_) return;
  stopping_.store(true);
  for (auto& loop : loops_) asio::post(loop->ioc, [l = loop.get()] { BeginDrain(*l); });
  WaitForDrain();
  StopLoops();
  ADS_LOG(info, "http server stopped", "port", port_);
}

}  // namespace

Result<std::unique_ptr<Server>> Server::Create(const ServerOptions& options, const Router& router) {
  ADS_RETURN_IF_ERROR(detail::ParseListenAddress(options.listen).status());
  if (options.max_connections < 1 || options.max_requests_per_connection < 1) {
    return InvalidArgumentError("max_connections and max_requests_per_connection must be >= 1");
  }
  if (options.max_worker_queue < 1 || options.max_connections_per_ip < 0 ||
      options.shed_after.count() < 0) {
    return InvalidArgumentError(
        "max_worker_queue must be >= 1, max_connections_per_ip and shed_after >= 0");
  }
  // A spool directory that cannot take a file fails the start, not every bulk upload later.
  if (!options.spool_dir.empty()) {
    detail::BodySpool probe;
    if (Status spool = probe.Open(options.spool_dir); !spool.ok()) {
      return InvalidArgumentError("http.spool_dir cannot take request bodies",
                                  {{"http.spool_dir", spool.message()}});
    }
  }
  std::vector<IpNetwork> exempt;
  for (const std::string& text : options.exempt_addresses) {
    std::optional<IpNetwork> network = ParseNetwork(text);
    if (!network) return InvalidArgumentError("not an address or CIDR: " + text);
    exempt.push_back(*network);
  }
  return std::unique_ptr<Server>(
      std::make_unique<ServerImpl>(options, router, IpSet(exempt)));
}

}  // namespace adserver::http
