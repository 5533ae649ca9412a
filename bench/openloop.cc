// adserver-openloop: an open-loop HTTP/1.1 load generator for overload measurements (issue 18).
// wrk is closed-loop: a slow server slows its client down, so it can never offer more than the
// server sustains. Here every connection has a fixed schedule (--rate / --connections requests
// per second, evenly spaced, the connections' phases staggered) and writes the next request at
// its scheduled time whether or not earlier answers have arrived (HTTP/1.1 pipelining; the
// server answers in order). A request's latency runs from its SCHEDULED send time to the end of
// its response, so a stalled server is charged for the whole stall (no coordinated omission,
// as in wrk2). A connection that already has --max-outstanding requests in flight at a send
// time skips that request ("dropped by client"). A connection the server closes after an answer
// with "Connection: close" (its max_requests_per_connection) is reopened and the requests sent
// after that answer, which the server did not read, are sent again on the new one with their
// first scheduled times (RFC 9112 section 9.3.2: a pipelining client retries unanswered
// requests when the connection closes; counted as "resent"). A connection closed any other way
// (EOF, reset) fails its in-flight requests as errors and is reopened.
//
//   adserver-openloop --port P --rate R --duration S [--warmup W] [--connections C]
//                     --requests FILE [--max-outstanding N] [--shed-status 503,500]
//                     [--tick-us T] [--arrival kernel|tool] [--json]
//
// FILE holds raw HTTP/1.1 requests back to back, each with its Content-Length (bench/overload.sh
// dumps bench/wrk_mix.lua's mix); they are sent in turn, cycling. Requests scheduled during the
// warm-up are sent but not recorded. Results are reported separately for "accepted" responses
// and "shed" ones (the --shed-status codes: the server's fast 503/500 under overload): count,
// rate and latency percentiles in µs, plus totals and counts per status. The table goes to
// stdout, or to stderr with --json, which prints one JSON object on stdout instead.
// One thread: the tool is meant to get a CPU of its own (taskset).
// A response's end is, by default (--arrival kernel), the kernel's receive timestamp of the
// last bytes the read that completed it returned (SO_TIMESTAMPNS), not the moment the tool got
// to read them: when the tool's own CPU is the bottleneck (2R on a 2-core machine, the server
// on the other core), answers wait in its socket, and that wait is the tool's, not the
// server's. It is reported apart ("recv lag"); --arrival tool charges it as before. A read
// that returns several responses stamps them all with its last bytes' time, so earlier ones
// are charged a little more, never less.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <bit>
#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include <cerrno>
#include <cstring>

#include "http/detail/stamped_recv.h"

namespace adserver::bench {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using Nanos = std::chrono::nanoseconds;

struct Flags {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  double rate = 1000;
  double duration_s = 10;
  double warmup_s = 0;
  int connections = 64;
  std::string requests_file;
  int max_outstanding = 64;
  std::vector<int> shed_statuses = {503, 500};
  // After the last scheduled request, how long to wait for answers still in flight; those
  // still missing then count as errors (timeouts).
  double drain_s = 5;
  // The send timer fires at most once per tick and sends everything due by then: at 100 k
  // requests/s a timer per request cost the tool a wake-up and a timerfd_settime each (its own
  // CPU limited the overload steps). A request sent up to a tick late is charged that lateness.
  // 0: a timer run per request (the default).
  double tick_us = 0;
  // "kernel": a response arrived at the kernel's receive timestamp; "tool": when it was read.
  std::string arrival = "kernel";
  bool json = false;
};

// A log-linear histogram of nanoseconds: exact below 256 ns, then 128 buckets per power of two
// (relative bucket width <= 0.8 %) up to 2^40 ns (18 min). Not thread-safe.
class Histogram {
 public:
  void Record(int64_t ns) {
    uint64_t v = ns < 0 ? 0 : static_cast<uint64_t>(ns);
    v = std::min<uint64_t>(v, (uint64_t{1} << 40) - 1);
    ++counts_[Index(v)];
    ++total_;
    max_ = std::max(max_, v);
  }
  uint64_t count() const { return total_; }
  uint64_t max() const { return max_; }
  // The upper edge of the bucket holding the p-th percentile (0 when empty), at most max().
  uint64_t Percentile(double p) const {
    if (total_ == 0) return 0;
    auto rank = static_cast<uint64_t>(p / 100.0 * static_cast<double>(total_) + 0.999999);
    rank = std::clamp<uint64_t>(rank, 1, total_);
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(UpperEdge(i), max_);
    }
    return max_;
  }

 private:
  static constexpr int kSubBits = 8;  // values below 2^kSubBits get a bucket each
  static constexpr int kHalf = 1 << (kSubBits - 1);
  static constexpr size_t kBuckets = (40 - kSubBits + 2) * kHalf;

  static size_t Index(uint64_t v) {
    if (v < (uint64_t{1} << kSubBits)) return v;
    const int shift = std::bit_width(v) - kSubBits;
    return static_cast<size_t>(shift) * kHalf + (v >> shift);
  }
  static uint64_t UpperEdge(size_t i) {
    if (i < (size_t{1} << kSubBits)) return i;
    const size_t shift = i / kHalf - 1;
    const uint64_t top = i - shift * kHalf;
    return ((top + 1) << shift) - 1;
  }

  std::vector<uint64_t> counts_ = std::vector<uint64_t>(kBuckets);
  uint64_t total_ = 0;
  uint64_t max_ = 0;
};

// Totals over the measured window (requests scheduled after the warm-up).
struct Stats {
  uint64_t offered = 0;    // scheduled sends
  uint64_t sent = 0;       // written (queued to the socket)
  uint64_t completed = 0;  // full responses received
  uint64_t dropped = 0;    // skipped: the connection had --max-outstanding in flight
  uint64_t errors = 0;     // in flight when the connection closed or failed, or unanswered
  uint64_t timeouts = 0;   // of the errors: still unanswered at the end of the drain
  uint64_t reconnects = 0;
  uint64_t resent = 0;     // unanswered at a "Connection: close" and sent again
  // The tool's own CPU time and the wall time from the first scheduled send to the end of the
  // drain: near 1 CPU second per second, the tool (not the server) may be what lags.
  double cpu_s = 0;
  double wall_s = 0;
  std::map<int, uint64_t> statuses;
  Histogram accepted;
  Histogram shed;
  Histogram send_lag;  // how late the tool wrote requests after their scheduled time
  Histogram recv_lag;  // how long answers waited in the tool's socket (--arrival kernel)
  uint64_t stamped_reads = 0;    // reads that came with a kernel timestamp
  uint64_t unstamped_reads = 0;  // reads without one (charged at the tool's read time)
};

// A complete response: its status, whether it closes the connection, its size with the body.
struct Response {
  int status = 0;
  bool close = false;
  size_t size = 0;
};

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Parses the head of an HTTP/1.x message in `in`: on success, sets the header-derived fields
// and returns the head's size (through "\r\n\r\n"); 0 if incomplete; nullopt if malformed.
// `content_length` is -1 without the header.
struct Head {
  std::string_view first_line;
  int64_t content_length = -1;
  bool close = false;
  size_t size = 0;
};
std::optional<Head> ParseHead(std::string_view in, bool& complete) {
  complete = false;
  const size_t end = in.find("\r\n\r\n");
  if (end == std::string_view::npos) return Head{};
  complete = true;
  Head head{.size = end + 4};
  std::string_view rest = in.substr(0, end + 2);
  size_t eol = rest.find("\r\n");
  head.first_line = rest.substr(0, eol);
  rest.remove_prefix(eol + 2);
  while (!rest.empty()) {
    eol = rest.find("\r\n");
    std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol + 2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    const std::string_view name = Trim(line.substr(0, colon));
    const std::string_view value = Trim(line.substr(colon + 1));
    if (IEquals(name, "content-length")) {
      int64_t n = 0;
      if (value.empty()) return std::nullopt;
      for (char c : value) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + (c - '0');
      }
      head.content_length = n;
    } else if (IEquals(name, "connection")) {
      head.close = IEquals(value, "close");
    }
  }
  return head;
}

// Returns the next complete response at the start of `in` (size 0: incomplete), or nullopt if
// `in` does not start with a response we understand.
std::optional<Response> ParseResponse(std::string_view in) {
  bool complete = false;
  std::optional<Head> head = ParseHead(in, complete);
  if (!head) return std::nullopt;
  if (!complete) return Response{};
  const std::string_view line = head->first_line;
  if (line.size() < 12 || line.substr(0, 7) != "HTTP/1." || line[8] != ' ') return std::nullopt;
  int status = 0;
  for (size_t i = 9; i < 12; ++i) {
    if (line[i] < '0' || line[i] > '9') return std::nullopt;
    status = status * 10 + (line[i] - '0');
  }
  const bool no_body = status == 204 || status == 304 || status / 100 == 1;
  if (!no_body && head->content_length < 0) return std::nullopt;  // adserver always sends it
  const size_t body = no_body ? 0 : static_cast<size_t>(head->content_length);
  if (in.size() < head->size + body) return Response{};
  return Response{.status = status, .close = head->close, .size = head->size + body};
}

// Splits raw requests sent back to back into one string each (head + Content-Length body).
std::optional<std::vector<std::string>> SplitRequests(std::string_view all, std::string& error) {
  std::vector<std::string> requests;
  while (!all.empty()) {
    bool complete = false;
    std::optional<Head> head = ParseHead(all, complete);
    if (!head || !complete) {
      error = "request " + std::to_string(requests.size() + 1) + " has no complete head";
      return std::nullopt;
    }
    const size_t size = head->size + static_cast<size_t>(std::max<int64_t>(0, head->content_length));
    if (size > all.size()) {
      error = "request " + std::to_string(requests.size() + 1) + " is cut short";
      return std::nullopt;
    }
    requests.emplace_back(all.substr(0, size));
    all.remove_prefix(size);
  }
  if (requests.empty()) error = "no requests";
  if (requests.empty()) return std::nullopt;
  return requests;
}

// The load: connections, the global schedule and the statistics. Request k (k = 0, 1, ...) is
// due at start + k / rate on connection k % connections, so each connection's requests are
// evenly spaced and the connections are staggered by 1 / rate. Single-threaded.
class Load {
 public:
  Load(asio::io_context& io, const Flags& flags, std::vector<std::string> requests,
       tcp::endpoint endpoint)
      : io_(io), flags_(flags), requests_(std::move(requests)), endpoint_(endpoint), timer_(io) {
    const double period_ns = 1e9 / flags_.rate;
    period_ = Nanos(static_cast<int64_t>(period_ns));
    fraction_ = period_ns - static_cast<double>(period_.count());
    for (int i = 0; i < flags_.connections; ++i) conns_.push_back(std::make_unique<Conn>(io));
  }

  // Connects every connection, then runs the schedule and the drain. Returns false if some
  // connection could not be opened at the start.
  bool Run() {
    for (size_t i = 0; i < conns_.size(); ++i) Connect(i);
    io_.run_for(std::chrono::seconds(10));  // AllOpen() stops it early
    if (!AllOpen()) return false;
    io_.restart();
    start_ = Clock::now();
    measure_from_ = start_ + ToNanos(flags_.warmup_s);
    end_ = measure_from_ + ToNanos(flags_.duration_s);
    total_ = static_cast<uint64_t>((flags_.warmup_s + flags_.duration_s) * flags_.rate);
    const double cpu_before = CpuSeconds();
    ArmTimer();
    io_.run();
    stats_.cpu_s = CpuSeconds() - cpu_before;
    stats_.wall_s = std::chrono::duration<double>(Clock::now() - start_).count();
    return true;
  }

  const Stats& stats() const { return stats_; }

 private:
  enum class State { kConnecting, kOpen, kClosed };
  struct Pending {
    Clock::time_point due;  // scheduled send time
    size_t request = 0;     // index into requests_
  };

  // One socket's life: replaced by a fresh one on reconnect, so handlers of the old socket
  // (holding it by shared_ptr) see that they are stale and do nothing.
  struct Link {
    explicit Link(asio::io_context& io) : socket(io) {}
    tcp::socket socket;
    std::string out;      // requests waiting for the write in progress to finish
    std::string writing;  // the write in progress
    std::vector<char> in = std::vector<char>(64 * 1024);
    std::string parse;  // received bytes not yet parsed into responses
    size_t parsed = 0;  // bytes of `parse` already consumed
  };
  struct Conn {
    explicit Conn(asio::io_context& io) : retry(io) {}
    std::shared_ptr<Link> link;
    State state = State::kClosed;
    bool writing = false;
    std::deque<Pending> in_flight;  // oldest first
    std::deque<Pending> resend;     // not read by the server before it closed; sent on reconnect
    asio::steady_timer retry;
  };

  static double CpuSeconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const auto seconds = [](const timeval& t) {
      return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
  }
  static Nanos ToNanos(double seconds) { return Nanos(static_cast<int64_t>(seconds * 1e9)); }
  bool Measured(Clock::time_point scheduled) const {
    return scheduled >= measure_from_ && scheduled < end_;
  }

  bool AllOpen() const {
    return std::all_of(conns_.begin(), conns_.end(),
                       [](const auto& c) { return c->state == State::kOpen; });
  }
  Clock::time_point Due(uint64_t k) const {
    return start_ + period_ * static_cast<int64_t>(k) +
           Nanos(static_cast<int64_t>(static_cast<double>(k) * fraction_));
  }

  void Connect(size_t i) {
    Conn& c = *conns_[i];
    c.link = std::make_shared<Link>(io_);
    c.state = State::kConnecting;
    c.writing = false;
    c.link->socket.async_connect(endpoint_, [this, i, link = c.link](boost::system::error_code ec) {
      Conn& c = *conns_[i];
      if (c.link != link) return;
      if (ec) {
        Fail(i);
        return;
      }
      c.state = State::kOpen;
      link->socket.set_option(tcp::no_delay(true));
      if (KernelArrival()) {
        if (!adserver::http::detail::EnableReceiveTimestamps(link->socket.native_handle())) {
          std::cerr << "SO_TIMESTAMPNS: " << std::strerror(errno)
                    << "; answers are stamped when read\n";
        }
      }
      if (start_ == Clock::time_point{} && AllOpen()) io_.stop();
      for (const Pending& p : c.resend) {
        c.in_flight.push_back(p);
        link->out += requests_[p.request];
      }
      c.resend.clear();
      Read(i);
      Write(i);
    });
  }

  // The connection failed or was closed by the server: its requests in flight are errors; it
  // is reopened at once, or after 10 ms if connecting failed (and not after the drain began).
  void Fail(size_t i) {
    Conn& c = *conns_[i];
    const bool was_connecting = c.state == State::kConnecting;
    for (const Pending& p : c.in_flight) stats_.errors += Measured(p.due) ? 1 : 0;
    c.in_flight.clear();
    boost::system::error_code ignored;
    c.link->socket.close(ignored);
    c.link.reset();
    c.state = State::kClosed;
    c.writing = false;
    // After the schedule, a connection is reopened only for requests it must send again.
    if (done_scheduling_ && c.resend.empty()) {
      MaybeFinish();
      return;
    }
    if (start_ != Clock::time_point{}) ++stats_.reconnects;
    if (!was_connecting) {
      Connect(i);
      return;
    }
    c.retry.expires_after(std::chrono::milliseconds(10));
    c.retry.async_wait([this, i](boost::system::error_code ec) {
      if (!ec && (!done_scheduling_ || !conns_[i]->resend.empty())) Connect(i);
    });
  }

  bool KernelArrival() const { return flags_.arrival == "kernel"; }

  void Read(size_t i) {
    const std::shared_ptr<Link>& link = conns_[i]->link;
    if (KernelArrival()) {
      link->socket.async_wait(tcp::socket::wait_read,
                              [this, i, link](boost::system::error_code ec) {
                                if (conns_[i]->link != link) return;
                                if (ec) {
                                  Fail(i);
                                  return;
                                }
                                if (ReceiveStamped(i, link)) Read(i);
                              });
      return;
    }
    link->socket.async_read_some(
        asio::buffer(link->in), [this, i, link](boost::system::error_code ec, size_t n) {
          if (conns_[i]->link != link) return;
          if (ec) {
            Fail(i);
            return;
          }
          link->parse.append(link->in.data(), n);
          const Clock::time_point now = Clock::now();
          if (!Consume(i, *link, now, now)) return;
          Read(i);
        });
  }

  // Reads what the socket holds with recvmsg, each read's responses stamped with the kernel's
  // receive time of its last bytes. False if the connection failed or closed.
  bool ReceiveStamped(size_t i, const std::shared_ptr<Link>& link) {
    for (;;) {
      const adserver::http::detail::StampedRecv read = adserver::http::detail::RecvStamped(
          link->socket.native_handle(), link->in.data(), link->in.size());
      if (read.bytes < 0 && (read.error == EAGAIN || read.error == EWOULDBLOCK)) return true;
      if (read.bytes <= 0) {
        Fail(i);
        return false;
      }
      const ssize_t n = read.bytes;
      const Clock::time_point now = Clock::now();
      Clock::time_point arrival = now;
      const bool stamped = read.waited_ns >= 0;
      // The stamp is CLOCK_REALTIME; a step of that clock must not make answers early.
      if (read.waited_ns > 0 && read.waited_ns < 60'000'000'000) {
        arrival = now - Nanos(read.waited_ns);
      }
      ++(stamped ? stats_.stamped_reads : stats_.unstamped_reads);
      link->parse.append(link->in.data(), static_cast<size_t>(n));
      if (!Consume(i, *link, arrival, now)) return false;
      if (static_cast<size_t>(n) < link->in.size()) return true;  // drained
    }
  }

  // Takes the complete responses off the link's buffer. Returns false if the connection was
  // closed (by the response or a parse error).
  // `arrival`: when the bytes read last reached the socket; `now`: when the tool read them.
  bool Consume(size_t i, Link& link, Clock::time_point arrival, Clock::time_point now) {
    Conn& c = *conns_[i];
    for (;;) {
      std::string_view rest(link.parse);
      rest.remove_prefix(link.parsed);
      if (rest.empty()) break;
      std::optional<Response> r = ParseResponse(rest);
      if (!r || (r->size > 0 && c.in_flight.empty())) {
        std::cerr << "unparsable or unrequested response on connection " << i << "\n";
        Fail(i);
        return false;
      }
      if (r->size == 0) break;
      link.parsed += r->size;
      const Clock::time_point due = c.in_flight.front().due;
      Record(due, arrival, r->status);
      if (Measured(due)) stats_.recv_lag.Record((now - arrival).count());
      c.in_flight.pop_front();
      if (r->close) {
        // The server read nothing after this answer: what is still in flight goes again.
        for (const Pending& p : c.in_flight) stats_.resent += Measured(p.due) ? 1 : 0;
        c.resend.insert(c.resend.end(), c.in_flight.begin(), c.in_flight.end());
        c.in_flight.clear();
        Fail(i);
        return false;
      }
    }
    if (link.parsed == link.parse.size() || link.parsed > 1024 * 1024) {
      link.parse.erase(0, link.parsed);
      link.parsed = 0;
    }
    if (done_scheduling_) MaybeFinish();
    return true;
  }

  void Record(Clock::time_point scheduled, Clock::time_point now, int status) {
    if (!Measured(scheduled)) return;
    ++stats_.completed;
    ++stats_.statuses[status];
    const bool shed = std::find(flags_.shed_statuses.begin(), flags_.shed_statuses.end(),
                                status) != flags_.shed_statuses.end();
    (shed ? stats_.shed : stats_.accepted).Record((now - scheduled).count());
  }

  void Write(size_t i) {
    Conn& c = *conns_[i];
    if (c.state != State::kOpen || c.writing || c.link->out.empty()) return;
    c.writing = true;
    std::shared_ptr<Link> link = c.link;
    std::swap(link->writing, link->out);
    link->out.clear();
    asio::async_write(link->socket, asio::buffer(link->writing),
                      [this, i, link](boost::system::error_code ec, size_t) {
                        if (conns_[i]->link != link) return;
                        if (ec) {
                          Fail(i);
                          return;
                        }
                        conns_[i]->writing = false;
                        Write(i);
                      });
  }

  // Sends every request due by now, then waits for the next one.
  void OnTimer() {
    const Clock::time_point now = Clock::now();
    last_fire_ = now;
    std::vector<size_t> touched;
    while (next_ < total_) {
      const Clock::time_point due = Due(next_);
      if (due > now) break;
      const size_t i = next_ % conns_.size();
      if (Send(i, due, now)) touched.push_back(i);
      ++next_;
    }
    for (size_t i : touched) Write(i);
    if (next_ >= total_) {
      done_scheduling_ = true;
      timer_.expires_after(ToNanos(flags_.drain_s));
      timer_.async_wait([this](boost::system::error_code ec) {
        if (!ec) Finish();
      });
      MaybeFinish();
      return;
    }
    ArmTimer();
  }

  bool Send(size_t i, Clock::time_point due, Clock::time_point now) {
    Conn& c = *conns_[i];
    const bool measured = Measured(due);
    stats_.offered += measured ? 1 : 0;
    if (c.state == State::kClosed ||
        static_cast<int>(c.in_flight.size() + c.resend.size()) >= flags_.max_outstanding) {
      stats_.dropped += measured ? 1 : 0;
      return false;
    }
    if (measured) {
      ++stats_.sent;
      stats_.send_lag.Record((now - due).count());
    }
    const size_t request = next_ % requests_.size();
    c.in_flight.push_back(Pending{.due = due, .request = request});
    c.link->out += requests_[request];
    return true;
  }

  void ArmTimer() {
    const Clock::time_point earliest = last_fire_ + Nanos(static_cast<int64_t>(flags_.tick_us * 1e3));
    timer_.expires_at(std::max(Due(next_), earliest));
    timer_.async_wait([this](boost::system::error_code ec) {
      if (!ec) OnTimer();
    });
  }

  void MaybeFinish() {
    for (const auto& c : conns_) {
      if (!c->in_flight.empty() || !c->resend.empty()) return;
    }
    Finish();
  }

  // Everything answered, or the drain timed out: what is still in flight is an error.
  void Finish() {
    for (auto& c : conns_) {
      for (const std::deque<Pending>* pending : {&c->in_flight, &c->resend}) {
        for (const Pending& p : *pending) {
          if (!Measured(p.due)) continue;
          ++stats_.errors;
          ++stats_.timeouts;
        }
      }
      c->in_flight.clear();
      c->resend.clear();
    }
    io_.stop();
  }

  asio::io_context& io_;
  const Flags& flags_;
  std::vector<std::string> requests_;
  tcp::endpoint endpoint_;
  asio::steady_timer timer_;
  std::vector<std::unique_ptr<Conn>> conns_;
  Nanos period_{};
  double fraction_ = 0;  // sub-nanosecond part of the period, so long runs keep the rate
  Clock::time_point start_{};
  Clock::time_point last_fire_{};  // when OnTimer last ran (ArmTimer's tick)
  Clock::time_point measure_from_{};
  Clock::time_point end_{};
  uint64_t total_ = 0;
  uint64_t next_ = 0;
  bool done_scheduling_ = false;
  Stats stats_;
};

uint64_t Micros(uint64_t ns) { return (ns + 999) / 1000; }

// {"count":..,"rate":..,"p50_us":..,...} for one histogram over `seconds`.
std::string JsonLatency(const Histogram& h, double seconds) {
  std::ostringstream out;
  out << "{\"count\":" << h.count() << ",\"rate\":" << static_cast<double>(h.count()) / seconds
      << ",\"p50_us\":" << Micros(h.Percentile(50)) << ",\"p90_us\":" << Micros(h.Percentile(90))
      << ",\"p99_us\":" << Micros(h.Percentile(99))
      << ",\"p999_us\":" << Micros(h.Percentile(99.9)) << ",\"max_us\":" << Micros(h.max())
      << "}";
  return out.str();
}

std::string Json(const Flags& flags, const Stats& s) {
  std::ostringstream out;
  out << "{\"rate\":" << flags.rate << ",\"duration_s\":" << flags.duration_s
      << ",\"warmup_s\":" << flags.warmup_s << ",\"connections\":" << flags.connections
      << ",\"max_outstanding\":" << flags.max_outstanding << ",\"offered\":" << s.offered
      << ",\"sent\":" << s.sent << ",\"completed\":" << s.completed
      << ",\"dropped\":" << s.dropped << ",\"errors\":" << s.errors
      << ",\"timeouts\":" << s.timeouts << ",\"reconnects\":" << s.reconnects
      << ",\"resent\":" << s.resent
      << ",\"tool_cpu_s\":" << s.cpu_s << ",\"wall_s\":" << s.wall_s
      << ",\"statuses\":{";
  const char* sep = "";
  for (const auto& [status, n] : s.statuses) {
    out << sep << "\"" << status << "\":" << n;
    sep = ",";
  }
  out << "},\"accepted\":" << JsonLatency(s.accepted, flags.duration_s)
      << ",\"shed\":" << JsonLatency(s.shed, flags.duration_s)
      << ",\"send_lag\":" << JsonLatency(s.send_lag, flags.duration_s)
      << ",\"recv_lag\":" << JsonLatency(s.recv_lag, flags.duration_s) << ",\"arrival\":\""
      << flags.arrival << "\",\"stamped_reads\":" << s.stamped_reads
      << ",\"unstamped_reads\":" << s.unstamped_reads << "}\n";
  return out.str();
}

void TableRow(std::ostream& out, const char* name, const Histogram& h, double seconds) {
  char line[200];
  std::snprintf(line, sizeof line, "%-9s %10llu %10.0f %9llu %9llu %9llu %9llu %9llu\n", name,
                static_cast<unsigned long long>(h.count()),
                static_cast<double>(h.count()) / seconds,
                static_cast<unsigned long long>(Micros(h.Percentile(50))),
                static_cast<unsigned long long>(Micros(h.Percentile(90))),
                static_cast<unsigned long long>(Micros(h.Percentile(99))),
                static_cast<unsigned long long>(Micros(h.Percentile(99.9))),
                static_cast<unsigned long long>(Micros(h.max())));
  out << line;
}

void Table(std::ostream& out, const Flags& flags, const Stats& s) {
  out << "offered " << flags.rate << " req/s for " << flags.duration_s << " s (after "
      << flags.warmup_s << " s warm-up) over " << flags.connections << " connections, at most "
      << flags.max_outstanding << " outstanding each\n";
  out << "              count      req/s    p50 us    p90 us    p99 us  p99.9 us    max us\n";
  TableRow(out, "accepted", s.accepted, flags.duration_s);
  TableRow(out, "shed", s.shed, flags.duration_s);
  TableRow(out, "send lag", s.send_lag, flags.duration_s);
  TableRow(out, "recv lag", s.recv_lag, flags.duration_s);
  out << "offered " << s.offered << ", sent " << s.sent << ", completed " << s.completed
      << ", dropped by client " << s.dropped << ", errors " << s.errors << " (unanswered "
      << s.timeouts << "), reconnects " << s.reconnects << ", resent after Connection: close "
      << s.resent << "\nstatuses:";
  for (const auto& [status, n] : s.statuses) out << " " << status << "=" << n;
  out << "\ntool CPU " << s.cpu_s << " s over " << s.wall_s << " s (send lag: how late the tool wrote "
      << "requests; large with the tool near 1 CPU s/s means the tool, not the server, lags)\n"
      << "arrival: " << flags.arrival << " (reads with a kernel timestamp " << s.stamped_reads
      << ", without " << s.unstamped_reads << "; recv lag: how long answers waited in the "
      << "tool's socket before it read them, not charged to the server with --arrival kernel)\n";
}

Flags ParseFlags(int argc, char** argv, int& exit_code) {
  Flags flags;
  CLI::App app("Open-loop HTTP/1.1 load generator (bench/overload.sh, issue 18)");
  app.add_option("--host", flags.host, "Server address")->capture_default_str();
  app.add_option("--port", flags.port, "Server port")->required();
  app.add_option("--rate", flags.rate, "Requests per second, all connections together")
      ->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--duration", flags.duration_s, "Measured seconds")
      ->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--warmup", flags.warmup_s, "Seconds of load before the measured ones")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--connections", flags.connections, "Connections sharing the rate")
      ->capture_default_str()->check(CLI::Range(1, 100000));
  app.add_option("--requests", flags.requests_file,
                 "Raw HTTP/1.1 requests back to back, each with its Content-Length")
      ->required()->check(CLI::ExistingFile);
  app.add_option("--max-outstanding", flags.max_outstanding,
                 "Requests in flight per connection; more are dropped by the client")
      ->capture_default_str()->check(CLI::Range(1, 1000000));
  app.add_option("--shed-status", flags.shed_statuses, "Statuses counted as shed")
      ->delimiter(',')->capture_default_str();
  app.add_option("--tick-us", flags.tick_us,
                 "Least microseconds between two runs of the send timer (0: one per request)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10000.0));
  app.add_option("--arrival", flags.arrival,
                 "When a response arrived: kernel (its receive timestamp, SO_TIMESTAMPNS) or "
                 "tool (when the tool read it)")
      ->capture_default_str()
      ->check(CLI::IsMember({"kernel", "tool"}));
  app.add_option("--drain", flags.drain_s, "Seconds to wait for the last answers")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_flag("--json", flags.json, "JSON object on stdout, the table on stderr");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    exit_code = app.exit(e);
  }
  return flags;
}

int Main(int argc, char** argv) {
  int exit_code = -1;
  const Flags flags = ParseFlags(argc, argv, exit_code);
  if (exit_code >= 0) return exit_code;
  std::ifstream file(flags.requests_file, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::string error;
  std::optional<std::vector<std::string>> requests = SplitRequests(all, error);
  if (!requests) {
    std::cerr << flags.requests_file << ": " << error << "\n";
    return 1;
  }
  asio::io_context io(1);
  boost::system::error_code ec;
  tcp::resolver resolver(io);
  const auto endpoints = resolver.resolve(flags.host, std::to_string(flags.port), ec);
  if (ec || endpoints.empty()) {
    std::cerr << "cannot resolve " << flags.host << ": " << ec.message() << "\n";
    return 1;
  }
  Load load(io, flags, std::move(*requests), endpoints.begin()->endpoint());
  if (!load.Run()) {
    std::cerr << "could not open " << flags.connections << " connections to " << flags.host
              << ":" << flags.port << " within 10 s\n";
    return 1;
  }
  Table(flags.json ? std::cerr : std::cout, flags, load.stats());
  if (flags.json) std::cout << Json(flags, load.stats());
  return 0;
}

}  // namespace
}  // namespace adserver::bench

int main(int argc, char** argv) { return adserver::bench::Main(argc, argv); }
