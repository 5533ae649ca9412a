#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "common/status.h"
#include "http/options.h"
#include "http/router.h"

namespace adserver::http {

// Counters summed over all event loops. Read with relaxed loads for metrics.
struct ServerStats {
  std::atomic<uint64_t> connections_accepted{0};  // served (excludes rejected)
  std::atomic<uint64_t> connections_rejected{0};  // over max_connections
  std::atomic<int64_t> connections_open{0};
  std::atomic<uint64_t> requests_shed{0};            // answered with the route's overload answer
  std::atomic<uint64_t> connections_rejected_ip{0};  // over max_connections_per_ip
  std::atomic<uint64_t> loop_stalls{0};              // timeout sweeps >= 50 ms late
  std::atomic<uint64_t> loop_stall_longest_us{0};    // the longest of them
};

// HTTP/1.1 server on Boost.Asio/Beast: one event loop per thread, each with its own
// SO_REUSEPORT acceptor on the same port; keep-alive; per-connection header/body/idle
// timeouts; body limit per route (413); header limit (431); connection cap; 404/405 from the
// router with the spec's error body. Handlers marked Dispatch::kWorker run on a worker pool.
// Knows nothing about ads. Start/Stop from one thread; thread-safe otherwise.
class Server {
 public:
  // `router` must outlive the server. InvalidArgument for a malformed `listen` or a
  // max_connections / max_requests_per_connection below 1.
  static Result<std::unique_ptr<Server>> Create(const ServerOptions& options, const Router& router);
  virtual ~Server() = default;

  // Binds and starts the event loops and workers; returns once listening. InvalidArgument for a
  // malformed `listen` or a second call, Unavailable when the address cannot be bound.
  virtual Status Start() = 0;
  // The bound port (useful with port 0). Valid after Start.
  virtual uint16_t port() const = 0;
  // Graceful stop: stop accepting, let in-flight requests finish (up to drain_timeout; their
  // responses carry "Connection: close"), close idle connections, join threads. Idempotent; may
  // be called from any thread except the server's own (an event loop or a handler), e.g. a
  // signal-handling thread. A kWorker handler still running after drain_timeout is waited for
  // (it cannot be interrupted); its response is discarded. The server cannot be restarted.
  virtual void Stop() = 0;
  virtual const ServerStats& stats() const = 0;
  // Requests answered, including 4xx from the server itself: the sum of the event loops' own
  // counters (no counter is shared between loops on the request path). Any thread.
  virtual uint64_t requests_answered() const = 0;
  // Appends the server's metrics in the Prometheus text format: answers by route, method and
  // status, latency histograms per route, connections. Counters are per event loop, summed here;
  // any thread, while the server runs or after Stop.
  virtual void AppendMetrics(std::string& out) const = 0;
};

}  // namespace adserver::http
