#include "console/console.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "console/detail/embedded_assets.h"
#include "http/detail/gzip.h"

namespace adserver::console {
namespace {

constexpr std::string_view kOpenApiAsset = "openapi.yaml";

std::string_view ContentType(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".yaml")) return "application/yaml";
  return "application/octet-stream";
}

// A strong validator of the body: FNV-1a 64, stable across builds of the same bytes.
std::string ETag(std::string_view body) {
  uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : body) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  char out[24];
  std::snprintf(out, sizeof out, "\"%016llx\"", static_cast<unsigned long long>(hash));
  return out;
}

void SetCommonHeaders(http::Response& response) {
  response.SetHeader("Content-Security-Policy", kContentSecurityPolicy);
  // X-Content-Type-Options: nosniff comes with every answer of the server (http/server.cc).
  response.SetHeader("Referrer-Policy", "no-referrer");
  response.SetHeader("X-Frame-Options", "DENY");
}

// Where an asset is served: the page at /console/, the OpenAPI document at /openapi.yaml (a
// public document of the whole API, not a console file), everything else under /console/.
std::string AssetPath(std::string_view name) {
  if (name == "index.html") return "/console/";
  if (name == kOpenApiAsset) return "/openapi.yaml";
  return "/console/" + std::string(name);
}

http::Handler AssetHandler(const detail::EmbeddedAsset& asset) {
  // The console revalidates every time (an upgraded binary is seen at once); the OpenAPI
  // document may be cached for an hour by clients and shared caches (tooling fetches it often).
  std::string_view cache_control =
      asset.name == kOpenApiAsset ? "public, max-age=3600" : "no-cache";
  // Issue 38 item 5: a client that takes gzip gets the asset compressed once at start-up
  // (Chart.js 205 KB → 70 KB), with its own validator.
  std::optional<std::string> gzipped = http::detail::Gzip(asset.body, 9);
  std::string etag = ETag(asset.body);
  std::string gzip_etag = etag.substr(0, etag.size() - 1) + "-gzip\"";
  return [&asset, etag = std::move(etag), gzip_etag = std::move(gzip_etag),
          gzipped = std::move(gzipped), cache_control](const http::Request& request) {
    http::Response response;
    SetCommonHeaders(response);
    const bool gzip = gzipped && http::detail::AcceptsGzip(request.Header("Accept-Encoding"));
    response.SetHeader("Cache-Control", cache_control);
    if (gzipped) response.SetHeader("Vary", "Accept-Encoding");
    const std::string& tag = gzip ? gzip_etag : etag;
    response.SetHeader("ETag", tag);
    if (request.Header("If-None-Match") == tag) {
      response.status = 304;
      return response;
    }
    response.SetHeader("Content-Type", ContentType(asset.name));
    if (gzip) {
      response.SetHeader("Content-Encoding", "gzip");
      response.body = *gzipped;
    } else {
      response.body = asset.body;
    }
    return response;
  };
}

}  // namespace

void RegisterRoutes(http::Router& router) {
  for (const detail::EmbeddedAsset& asset : detail::EmbeddedAssets()) {
    router.Add(http::Method::kGet, AssetPath(asset.name), AssetHandler(asset));
  }
  router.Add(http::Method::kGet, "/console", [](const http::Request&) {
    http::Response response;
    response.status = 308;
    response.SetHeader("Location", "/console/");
    response.SetHeader("Cache-Control", "no-cache");
    return response;
  });
}

}  // namespace adserver::console
