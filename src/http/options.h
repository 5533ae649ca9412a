#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace adserver::http {

struct ServerOptions {
  // "HOST:PORT"; port 0 picks a free port (see Server::port()).
  std::string listen = "127.0.0.1:8080";
  // Event loops (one thread each); 0 = one per CPU the process may use (common/cpu_budget.h).
  int io_threads = 0;
  // Worker threads for Dispatch::kWorker handlers (admin API, the click redirect and
  // advertiser events, which wait for their durable commit). Waiting threads cost no CPU and
  // more of them let one group commit take more clicks (bench/click_load.sh: 2 workers 3.6 k
  // clicks/s, 32 workers 9.1 k on one core).
  int worker_threads = 16;
  // Open connections beyond this are closed right after accept.
  int max_connections = 10000;
  // Time allowed to receive a complete request header once its first byte arrived.
  std::chrono::milliseconds header_timeout{10'000};
  // Time allowed to receive the body after the header; also bounds writing one response.
  std::chrono::milliseconds body_timeout{10'000};
  // A keep-alive connection with no request in flight is closed after this (no 408 is sent;
  // neither for header/body timeouts).
  std::chrono::milliseconds idle_timeout{60'000};
  // Requests served on one connection before it is closed (bounds pipelining abuse).
  int max_requests_per_connection = 10'000;
  // Largest request header accepted (431 beyond).
  size_t max_header_bytes = 16 * 1024;
  // Where bodies of routes with RouteOptions::spool_after_bytes are written as they arrive
  // (unlinked files: nothing stays behind); empty = $TMPDIR, else /tmp. The app uses its data
  // directory, a disk rather than a tmpfs. Server::Create refuses one that cannot take a file.
  std::string spool_dir;
  // On shutdown, in-flight requests get this long to finish.
  std::chrono::milliseconds drain_timeout{10'000};
  // Load shedding (0 = off): the wait a request may have before its turn on the event loop,
  // counted from the kernel's receive timestamp (SO_TIMESTAMPNS) of its bytes, so it includes
  // the time bytes queue in the kernel while the loop serves other connections, which no clock
  // of the loop's own sees. Each loop runs a PIE controller (http/detail/admission.h) that
  // sheds the share of requests on routes with RouteOptions::overloaded (a fast 503 instead of
  // their handler) that keeps the waits near this target. 1000 µs suggested (bench/overload.sh in docs/BENCHMARKS.md). The stamp is
  // CLOCK_REALTIME: a step of that clock may shed, or spare, one read's requests.
  std::chrono::microseconds shed_after{0};
  // Requests waiting for or running on the worker pool beyond this get their route's overloaded
  // answer (or a 503) at once instead of queueing.
  int max_worker_queue = 1024;
  // Open connections from one peer address; more are closed right after accept, so that slow
  // clients from one address cannot hold the connection cap (header_timeout bounds each).
  // 0 = no limit. Counted per event loop (limit / loops each, rounded up): accept takes no lock.
  // High enough for a carrier NAT with many browsers behind one address.
  int max_connections_per_ip = 1000;
  // Peers max_connections_per_ip never applies to, as addresses or CIDRs: loopback (the
  // operator's own processes, benchmarks) and, added by the app, http.trusted_proxies (the load
  // balancers that carry many clients each).
  std::vector<std::string> exempt_addresses = {"127.0.0.0/8", "::1"};
  // Access log: one `request` line at info for one request in this many per event loop (its
  // id, method, route pattern, status, microseconds); 0 = off, 1 = every request.
  int access_log_one_in = 0;
};

}  // namespace adserver::http
