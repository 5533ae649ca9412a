#pragma once

// The only logging header. Usage:
//   ADS_LOG(info, "snapshot published", "campaigns", n, "ms", elapsed);
// Levels: error (a human must act), warn (degraded but serving), info (lifecycle),
// debug (off in production). Never log secrets, keys, identity ids or raw wallet lists.

#include <spdlog/spdlog.h>

#include <sstream>
#include <string>
#include <string_view>

#include "common/status.h"

namespace adserver::log {

namespace detail {
inline void AppendValue(std::ostringstream& out, const Status& s) { out << s.ToString(); }
template <typename T>
void AppendValue(std::ostringstream& out, const T& v) {
  out << v;
}
inline void AppendPairs(std::ostringstream&) {}
template <typename K, typename V, typename... Rest>
void AppendPairs(std::ostringstream& out, const K& key, const V& value, const Rest&... rest) {
  out << ' ' << key << '=';
  AppendValue(out, value);
  AppendPairs(out, rest...);
}
}  // namespace detail

template <typename... KV>
std::string Format(std::string_view message, const KV&... kv) {
  static_assert(sizeof...(KV) % 2 == 0, "ADS_LOG takes key/value pairs");
  std::ostringstream out;
  out << message;
  detail::AppendPairs(out, kv...);
  return out.str();
}

// Sets the global level from a name: "debug", "info", "warn", "error", "off".
void SetLevel(std::string_view level);

}  // namespace adserver::log

namespace adserver::log::levels {
inline constexpr auto trace = spdlog::level::trace;
inline constexpr auto debug = spdlog::level::debug;
inline constexpr auto info = spdlog::level::info;
inline constexpr auto warn = spdlog::level::warn;
inline constexpr auto error = spdlog::level::err;
}  // namespace adserver::log::levels

#define ADS_LOG(lvl, ...)                                                             \
  do {                                                                                \
    if (spdlog::should_log(::adserver::log::levels::lvl)) {                           \
      spdlog::log(::adserver::log::levels::lvl, "{}", ::adserver::log::Format(__VA_ARGS__)); \
    }                                                                                 \
  } while (0)
