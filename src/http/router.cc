#include "http/router.h"

#include <algorithm>
#include <future>
#include <memory>
#include <utility>

#include "common/check.h"
#include "http/detail/gzip.h"

namespace adserver::http {
namespace {

using Params = std::vector<std::pair<std::string_view, std::string_view>>;

// Name of the path parameter captured by a "{name}" segment, or empty for a literal.
std::string_view CaptureName(std::string_view segment) {
  if (segment.size() < 3 || segment.front() != '{' || segment.back() != '}') return {};
  return segment.substr(1, segment.size() - 2);
}

constexpr uint32_t Bit(Method m) { return 1u << static_cast<uint32_t>(m); }

// "GET, HEAD, POST" in enum order; HEAD is implied by GET (see Router::Find).
std::string AllowList(uint32_t methods) {
  if (methods & Bit(Method::kGet)) methods |= Bit(Method::kHead);
  std::string allow;
  for (Method m : {Method::kGet, Method::kHead, Method::kPost, Method::kPut, Method::kPatch,
                   Method::kDelete, Method::kOptions}) {
    if ((methods & Bit(m)) == 0) continue;
    if (!allow.empty()) allow += ", ";
    allow += MethodName(m);
  }
  return allow;
}

}  // namespace

const RouteOptions Router::kNoRouteOptions{};

Handler Router::Compressing(Handler inner) {
  return [inner = std::move(inner)](const Request& request) {
    Response response = inner(request);
    if (response.body.size() < RouteOptions::kCompressAfterBytes ||
        response.HasHeader("Content-Encoding")) {
      return response;
    }
    response.SetHeader("Vary", "Accept-Encoding");
    if (!detail::AcceptsGzip(request.Header("Accept-Encoding"))) return response;
    if (std::optional<std::string> gzipped = detail::Gzip(response.body, 6)) {
      response.body = std::move(*gzipped);
      response.SetHeader("Content-Encoding", "gzip");
    }
    return response;
  };
}

void Router::Add(Method method, std::string pattern, Handler handler, RouteOptions options) {
  ADS_CHECK(!pattern.empty() && pattern.front() == '/') << "route must start with '/': " << pattern;
  ADS_CHECK(handler != nullptr) << "route without handler: " << pattern;
  if (options.compress) handler = Compressing(std::move(handler));
  ADS_CHECK(method != Method::kOther) << "route for Method::kOther: " << pattern;
  Route route{.method = method,
              .pattern = pattern,
              .segments = {},
              .wildcard = false,
              .handler = std::move(handler),
              .options = options};
  std::string_view rest(pattern);
  while (!rest.empty()) {
    rest.remove_prefix(1);  // the '/'
    size_t end = rest.find('/');
    std::string_view segment = rest.substr(0, end);
    rest.remove_prefix(segment.size());
    if (segment == "*") {
      ADS_CHECK(rest.empty()) << "'*' must be the last segment: " << pattern;
      route.wildcard = true;
      break;
    }
    route.segments.emplace_back(segment);
  }
  const bool literal = !route.wildcard &&
                       std::none_of(route.segments.begin(), route.segments.end(),
                                    [](const std::string& s) { return !CaptureName(s).empty(); });
  const size_t index = routes_.size();
  routes_.push_back(std::move(route));
  if (!literal) return;
  auto& by_path = literal_[static_cast<size_t>(method)];
  if (by_path.contains(pattern)) return;  // an earlier route of this method matches it
  // The answer of the table walk for this method and path: the first route that matches.
  size_t first = index;
  Params scratch;
  for (size_t i = 0; i < index; ++i) {
    if (routes_[i].method == method && MatchPath(routes_[i], pattern, &scratch)) {
      first = i;
      break;
    }
  }
  by_path.emplace(pattern, first);
}

void Router::AddDeferred(Method method, std::string pattern, DeferredHandler handler,
                         RouteOptions options) {
  ADS_CHECK(handler != nullptr) << "route without handler: " << pattern;
  options.dispatch = Dispatch::kDeferred;
  auto shared = std::make_shared<DeferredHandler>(std::move(handler));
  Handler blocking = [shared](const Request& request) {
    std::promise<Response> answer;
    std::future<Response> future = answer.get_future();
    (*shared)(request, [&answer](Response response) { answer.set_value(std::move(response)); });
    return future.get();
  };
  Add(method, std::move(pattern), std::move(blocking), options);
  routes_.back().deferred = *shared;
}

bool Router::MatchPath(const Route& route, std::string_view path, Params* params) {
  std::string_view rest = path;
  for (const std::string& segment : route.segments) {
    if (rest.empty() || rest.front() != '/') return false;
    rest.remove_prefix(1);
    std::string_view current = rest.substr(0, rest.find('/'));
    rest.remove_prefix(current.size());
    std::string_view name = CaptureName(segment);
    if (name.empty()) {
      if (current != segment) return false;
    } else {
      if (current.empty()) return false;
      params->emplace_back(name, current);
    }
  }
  if (!route.wildcard) return rest.empty();
  if (rest.empty() || rest.front() != '/') return false;
  params->emplace_back("*", rest.substr(1));
  return true;
}

Router::Match Router::Find(Request& request) const {
  Match match;
  match.route = static_cast<uint32_t>(routes_.size());
  if (request.method != Method::kOther) {
    const auto& by_path = literal_[static_cast<size_t>(request.method)];
    if (auto it = by_path.find(request.path); it != by_path.end()) {
      const Route& route = routes_[it->second];
      request.params.clear();
      MatchPath(route, request.path, &request.params);  // captures, if an earlier route had any
      match.handler = &route.handler;
      if (route.deferred) match.deferred = &route.deferred;
      match.options = &route.options;
      match.pattern = route.pattern;
      match.route = static_cast<uint32_t>(&route - routes_.data());
      match.status = 200;
      return match;
    }
  }
  uint32_t allowed = 0;
  const Route* get_route = nullptr;
  for (const Route& route : routes_) {
    request.params.clear();
    if (!MatchPath(route, request.path, &request.params)) continue;
    if (route.method == request.method) {
      match.handler = &route.handler;
      if (route.deferred) match.deferred = &route.deferred;
      match.options = &route.options;
      match.pattern = route.pattern;
      match.route = static_cast<uint32_t>(&route - routes_.data());
      match.status = 200;
      return match;
    }
    if (route.method == Method::kGet && get_route == nullptr) get_route = &route;
    allowed |= Bit(route.method);
  }
  request.params.clear();
  if (request.method == Method::kHead && get_route != nullptr) {
    // HEAD runs the GET handler; the server sends its headers without the body.
    MatchPath(*get_route, request.path, &request.params);
    match.handler = &get_route->handler;
    if (get_route->deferred) match.deferred = &get_route->deferred;
    match.options = &get_route->options;
    match.pattern = get_route->pattern;
    match.route = static_cast<uint32_t>(get_route - routes_.data());
    match.status = 200;
    return match;
  }
  if (allowed != 0) {
    match.status = 405;
    match.allow = AllowList(allowed);
  }
  return match;
}

std::vector<Router::RouteInfo> Router::Routes() const {
  std::vector<RouteInfo> out;
  out.reserve(routes_.size());
  for (const Route& route : routes_) out.push_back({route.method, route.pattern});
  return out;
}

}  // namespace adserver::http
