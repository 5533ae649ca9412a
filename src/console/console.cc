#include "console/console.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "console/detail/embedded_assets.h"

namespace adserver::console {
namespace {

std::string_view ContentType(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
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
  response.SetHeader("X-Content-Type-Options", "nosniff");
  response.SetHeader("Referrer-Policy", "no-referrer");
  response.SetHeader("X-Frame-Options", "DENY");
}

http::Handler AssetHandler(const detail::EmbeddedAsset& asset) {
  return [&asset, etag = ETag(asset.body)](const http::Request& request) {
    http::Response response;
    SetCommonHeaders(response);
    response.SetHeader("Cache-Control", "no-cache");
    response.SetHeader("ETag", etag);
    if (request.Header("If-None-Match") == etag) {
      response.status = 304;
      return response;
    }
    response.SetHeader("Content-Type", ContentType(asset.name));
    response.body = asset.body;
    return response;
  };
}

}  // namespace

void RegisterRoutes(http::Router& router) {
  for (const detail::EmbeddedAsset& asset : detail::EmbeddedAssets()) {
    std::string path =
        asset.name == "index.html" ? "/console/" : "/console/" + std::string(asset.name);
    router.Add(http::Method::kGet, path, AssetHandler(asset));
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
