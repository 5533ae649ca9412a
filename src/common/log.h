#pragma once

// The only logging header. Usage:
//   ADS_LOG(info, "snapshot published", "campaigns", n, "ms", elapsed);
// Levels: error (a human must act), warn (degraded but serving), info (lifecycle),
// debug (off in production). Never log secrets, keys, identity ids or raw wallet lists.
//
// Lines go to stderr as one JSON object each (the default, `log_format = "json"`):
//   {"ts":"2026-11-26T10:00:00.123456Z","level":"info","msg":"snapshot published","campaigns":3}
// numbers and booleans as JSON values, everything else as strings; or as text
// (`log_format = "text"`): `[time] [level] snapshot published campaigns=3`.

#include <spdlog/spdlog.h>

#include <atomic>
#include <cmath>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/status.h"

namespace adserver::log {

enum class LineFormat { kJson, kText };

namespace detail {
extern std::atomic<bool> json_lines;
// Appends `s` as a JSON string literal; bytes that are not valid UTF-8 become U+FFFD.
void AppendJsonText(std::string& out, std::string_view s);

template <typename T>
std::string ToText(const T& v) {
  if constexpr (std::is_same_v<T, Status>) {
    return v.ToString();
  } else {
    std::ostringstream out;
    out << v;
    return out.str();
  }
}
template <typename T>
void AppendJsonValue(std::string& out, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    out += v ? "true" : "false";
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, char>) {
    out += std::to_string(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isfinite(v)) {
      out += ToText(v);
    } else {
      AppendJsonText(out, ToText(v));
    }
  } else {
    AppendJsonText(out, ToText(v));
  }
}
inline void AppendJsonPairs(std::string&) {}
template <typename K, typename V, typename... Rest>
void AppendJsonPairs(std::string& out, const K& key, const V& value, const Rest&... rest) {
  out += ',';
  AppendJsonText(out, ToText(key));
  out += ':';
  AppendJsonValue(out, value);
  AppendJsonPairs(out, rest...);
}
inline void AppendTextPairs(std::ostringstream&) {}
template <typename K, typename V, typename... Rest>
void AppendTextPairs(std::ostringstream& out, const K& key, const V& value, const Rest&... rest) {
  out << ' ' << key << '=' << ToText(value);
  AppendTextPairs(out, rest...);
}
}  // namespace detail

// The line's body: `"msg":...,"key":value...` (JSON lines; the pattern adds the braces, the
// time and the level) or `message key=value...` (text).
template <typename... KV>
std::string Format(std::string_view message, const KV&... kv) {
  static_assert(sizeof...(KV) % 2 == 0, "ADS_LOG takes key/value pairs");
  if (detail::json_lines.load(std::memory_order_relaxed)) {
    std::string out = "\"msg\":";
    detail::AppendJsonText(out, message);
    detail::AppendJsonPairs(out, kv...);
    return out;
  }
  std::ostringstream out;
  out << message;
  detail::AppendTextPairs(out, kv...);
  return out.str();
}

// Sets the global level from a name: "debug", "info", "warn", "error", "off".
void SetLevel(std::string_view level);
// JSON lines (default) or text. Call before other threads log.
void SetFormat(LineFormat format);
// "json" or "text" (anything else: false, nothing changed).
bool SetFormat(std::string_view name);

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
