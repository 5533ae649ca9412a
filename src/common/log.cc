#include "common/log.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <mutex>

#include "common/json_writer.h"

namespace adserver::log {

namespace detail {

std::atomic<bool> json_lines{false};

namespace {
// Length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates, at most
// U+10FFFF), or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k) { return k < s.size() && (byte(k) & 0xC0) == 0x80; };
  unsigned char c = byte(i);
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(i + 1) || !cont(i + 2)) return 0;
    if (c == 0xE0 && byte(i + 1) < 0xA0) return 0;   // overlong
    if (c == 0xED && byte(i + 1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (c == 0xF0 && byte(i + 1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && byte(i + 1) >= 0x90) return 0;  // beyond U+10FFFF
    return 4;
  }
  return 0;
}
}  // namespace

void AppendJsonText(std::string& out, std::string_view s) {
  // AppendJsonString escapes; it needs valid UTF-8, so invalid bytes become U+FFFD first (a
  // copy only when there are any: log text is nearly always valid).
  std::string repaired;
  bool invalid = false;
  for (size_t i = 0; i < s.size();) {
    size_t n = static_cast<unsigned char>(s[i]) < 0x80 ? 1 : Utf8Length(s, i);
    if (n == 0 && !invalid) {
      invalid = true;
      repaired.assign(s.substr(0, i));
    }
    if (n == 0) {
      repaired += "\xEF\xBF\xBD";  // U+FFFD
      n = 1;
    } else if (invalid) {
      repaired.append(s.substr(i, n));
    }
    i += n;
  }
  AppendJsonString(out, invalid ? std::string_view(repaired) : s);
}

}  // namespace detail

void SetLevel(std::string_view level) {
  spdlog::set_level(spdlog::level::from_str(std::string(level)));
}

void SetFormat(LineFormat format) {
  // Log lines go to stderr (stdout is for the CLI's results and the demo's banner), unbuffered
  // per line as spdlog writes them.
  static std::once_flag once;
  std::call_once(once, [] { spdlog::set_default_logger(spdlog::stderr_logger_mt("adserver")); });
  detail::json_lines.store(format == LineFormat::kJson, std::memory_order_relaxed);
  if (format == LineFormat::kJson) {
    // Time in UTC with microseconds; %v is Format()'s `"msg":...` body.
    spdlog::set_pattern(R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l",%v})",
                        spdlog::pattern_time_type::utc);
  } else {
    spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
  }
}

bool SetFormat(std::string_view name) {
  if (name == "json") {
    SetFormat(LineFormat::kJson);
  } else if (name == "text") {
    SetFormat(LineFormat::kText);
  } else {
    return false;
  }
  return true;
}

}  // namespace adserver::log
