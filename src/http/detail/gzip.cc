#include "http/detail/gzip.h"

#include <zlib.h>

namespace adserver::http::detail {
namespace {

std::string_view Trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

}  // namespace

bool AcceptsGzip(std::string_view header) {
  while (!header.empty()) {
    const size_t comma = header.find(',');
    const std::string_view item = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    const size_t semi = item.find(';');
    const std::string_view coding = Trim(item.substr(0, semi));
    if (coding != "gzip" && coding != "*") continue;
    const std::string_view params =
        semi == std::string_view::npos ? std::string_view() : Trim(item.substr(semi + 1));
    // q=0, q=0.0, q=0.00 or q=0.000 refuse it; any other q (or none) takes it.
    if (params.starts_with("q=") || params.starts_with("Q=")) {
      const std::string_view q = Trim(params.substr(2));
      if (!q.empty() && q.front() == '0' && q.find_first_not_of("0.") == std::string_view::npos) {
        continue;
      }
    }
    return true;
  }
  return false;
}

std::optional<std::string> Gzip(std::string_view body, int level) {
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
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

}  // namespace adserver::http::detail
