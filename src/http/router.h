#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "http/message.h"

namespace adserver::http {

// How a route's handler runs.
enum class Dispatch : uint8_t {
  // On the event loop that read the request. For handlers that never block (ad serving).
  kInline,
  // On the server's worker pool; for handlers that do store I/O (admin API).
  kWorker,
  // On the event loop, answered later (Router::AddDeferred): for handlers that hand the work
  // to another thread and must not hold a thread while it runs (the click redirect waits for
  // its group commit).
  kDeferred,
};

using Handler = std::function<Response(const Request&)>;
// Sends the response of a deferred request. Callable from any thread, exactly once.
using Responder = std::function<void(Response)>;
// Runs on the event loop and must neither block nor throw; the request's views stay valid
// until `respond` is called (the connection reads nothing meanwhile).
using DeferredHandler = std::function<void(const Request&, Responder respond)>;

struct RouteOptions {
  Dispatch dispatch = Dispatch::kInline;
  // Requests with a larger body get 413.
  size_t max_body_bytes = 64 * 1024;
  // Bodies larger than this are written to a file (ServerOptions::spool_dir) as they arrive and
  // reach the handler as a read-only memory map, so uploads in flight do not hold the heap
  // (bulk imports). 0 = every body is kept in memory.
  size_t spool_after_bytes = 0;
  // The answer while the server sheds load (ServerOptions::shed_after, max_worker_queue), e.g.
  // a 503 with Retry-After; must be cheap and never block. Empty: the route is never shed by
  // how long a request waited (a kWorker route then gets a generic 503 when the pool is full).
  Handler overloaded;
  // Runs on the event loop once the request's header is in, before any of its body is read:
  // an answer refuses the request at once, and the connection closes without reading the body
  // (admin routes: a caller without credentials never gets to send 64 MiB). Must be cheap,
  // never block and never throw. Empty: every routed request is read whole.
  std::function<std::optional<Response>(const Request&)> admit;
  // Answers of kCompressAfterBytes or more go gzipped (zlib level 6, on the handler's thread)
  // to a request whose Accept-Encoding takes gzip, with Vary: Accept-Encoding (issue 38 item 5:
  // the admin API's JSON and CSV). Not for deferred routes; never on the serving path.
  bool compress = false;
  static constexpr size_t kCompressAfterBytes = 1024;
};

// A table of routes. Patterns are literal segments and "{name}" captures, e.g.
// "/admin/v1/publishers/{id}/keys/{keyId}"; a capture never matches an empty segment. A pattern
// ending in "/*" matches "/prefix/" and anything below it (not "/prefix" itself) and captures the
// rest as param "*". Matching is on the path without the query, byte for byte: "/v1/ads/" and
// "/v1/ads" are different paths. The first route added that matches wins. HEAD uses the GET
// route of the path unless a HEAD route exists (the server then drops the body).
// Build once before the server starts; immutable and thread-safe afterwards.
class Router {
 public:
  static const RouteOptions kNoRouteOptions;

  // `pattern` must start with '/'; `method` must not be kOther (checked).
  void Add(Method method, std::string pattern, Handler handler, RouteOptions options = {});
  // A Dispatch::kDeferred route. Match::handler is then a blocking adapter (it waits for
  // `respond`), for callers that run handlers directly (tests, the CLI's admin calls).
  void AddDeferred(Method method, std::string pattern, DeferredHandler handler,
                   RouteOptions options = {});

  struct Match {
    const Handler* handler = nullptr;  // null: no route for the method (see status)
    // Set for a kDeferred route (the server calls it instead of `handler`).
    const DeferredHandler* deferred = nullptr;
    // The route's options (the defaults when no route matched); valid while the router lives.
    const RouteOptions* options = &kNoRouteOptions;
    // The matched route's pattern ("/v1/click/{token}"; empty when none matched): names the
    // route in logs without the path's captured values.
    std::string_view pattern;
    // The matched route's position in Routes() (for per-route metrics); Routes().size() when
    // none matched.
    uint32_t route = 0;
    // When handler is null: 404 (no such path) or 405 (path exists, other method).
    int status = 404;
    // For 405: the allowed methods in a fixed order (GET, HEAD, POST, PUT, PATCH, DELETE,
    // OPTIONS), e.g. "POST, OPTIONS"; HEAD is listed when GET is.
    std::string allow;
  };
  // Matches the request's method and path; fills `request.params` on success.
  Match Find(Request& request) const;

  struct RouteInfo {
    Method method;
    std::string pattern;  // as given to Add
  };
  // Every route in the order added (for tests that check each route of a table).
  std::vector<RouteInfo> Routes() const;
  size_t route_count() const { return routes_.size(); }

 private:
  // `inner`, its answers gzipped as RouteOptions::compress says.
  static Handler Compressing(Handler inner);
  struct Route {
    Method method;
    std::string pattern;
    std::vector<std::string> segments;
    bool wildcard = false;
    Handler handler;
    RouteOptions options;
    DeferredHandler deferred;  // empty unless added by AddDeferred
  };
  static bool MatchPath(const Route& route, std::string_view path,
                        std::vector<std::pair<std::string_view, std::string_view>>* params);
  struct PathHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::vector<Route> routes_;
  // Per method, the first route matching each literal pattern's path (index into routes_):
  // the common requests (ads, clicks) are found without walking the table.
  std::array<std::unordered_map<std::string, size_t, PathHash, std::equal_to<>>,
             static_cast<size_t>(Method::kOther)>
      literal_;
};

}  // namespace adserver::http
