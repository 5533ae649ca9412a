#include "console/console.h"

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "console/detail/embedded_assets.h"

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

// `body` gzip-compressed (level 9, once at start-up), or nullopt when zlib fails or it would
// not be smaller.
std::optional<std::string> Gzip(std::string_view body) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) {
    return std::nullopt;
  }
  std::string out(deflateBound(&z, static_cast<uLong>(body.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  z.avail_in = static_cast<uInt>(body.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END || out.size() >= body.size()) return std::nullopt;
  return out;
}

// True when an Accept-Encoding header value takes gzip: a "gzip" or "*" coding whose q is not 0
// (RFC 9110 section 12.5.3).
bool AcceptsGzip(std::string_view header) {
  while (!header.empty()) {
    size_t comma = header.find(',');
    std::string_view item = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    const size_t semi = item.find(';');
    std::string_view coding = item.substr(0, semi);
    std::string_view params = semi == std::string_view::npos ? "" : item.substr(semi + 1);
    const auto trim = [](std::string_view v) {
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
      return v;
    };
    coding = trim(coding);
    if (coding != "gzip" && coding != "*") continue;
    params = trim(params);
    // q=0, q=0.0, q=0.00 or q=0.000 refuse it; any other q (or none) takes it.
    if (params.starts_with("q=") || params.starts_with("Q=")) {
      std::string_view q = trim(params.substr(2));
      if (!q.empty() && q.front() == '0' && q.find_first_not_of("0.") == std::string_view::npos) {
        continue;
      }
    }
    return true;
  }
  return false;
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
  std::optional<std::string> gzipped = Gzip(asset.body);
  std::string etag = ETag(asset.body);
  std::string gzip_etag = etag.substr(0, etag.size() - 1) + "-gzip\"";
  return [&asset, etag = std::move(etag), gzip_etag = std::move(gzip_etag),
          gzipped = std::move(gzipped), cache_control](const http::Request& request) {
    http::Response response;
    SetCommonHeaders(response);
    const bool gzip = gzipped && AcceptsGzip(request.Header("Accept-Encoding"));
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
