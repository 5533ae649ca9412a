#include "common/json_writer.h"

#include <charconv>
#include <cstdint>
#include <cstring>

namespace adserver {

namespace {
// Nonzero when any of the 8 bytes of `word` must be escaped: a control character (< 0x20), '"'
// or '\\'. SWAR: for each byte b, (b - k) borrows into the high bit when b < k; XOR with the
// repeated '"' / '\\' turns equality into zero. Bytes >= 0x80 (UTF-8) are masked off by ~word.
inline uint64_t NeedsEscape(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  auto zero_byte = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  uint64_t control = (word - kOnes * 0x20) & ~word & kHigh;
  return control | zero_byte(word ^ (kOnes * '"')) | zero_byte(word ^ (kOnes * '\\'));
}
}  // namespace

void AppendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t run_start = 0;
  size_t i = 0;
  while (i < s.size()) {
    // Skip 8 clean bytes at a time; fall back to one byte at a time near anything to escape.
    if (s.size() - i >= 8) {
      uint64_t word;
      std::memcpy(&word, s.data() + i, 8);
      if (NeedsEscape(word) == 0) {
        i += 8;
        continue;
      }
    }
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    out.append(s.data() + run_start, i - run_start);
    run_start = ++i;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
    }
  }
  out.append(s.data() + run_start, s.size() - run_start);
  out += '"';
}

void JsonObjectWriter::Key(std::string_view key) {
  if (!first_) out_ += ',';
  first_ = false;
  AppendJsonString(out_, key);
  out_ += ':';
}

JsonObjectWriter& JsonObjectWriter::String(std::string_view key, std::string_view value) {
  Key(key);
  AppendJsonString(out_, value);
  return *this;
}

JsonObjectWriter& JsonObjectWriter::Null(std::string_view key) {
  Key(key);
  out_ += "null";
  return *this;
}

JsonObjectWriter& JsonObjectWriter::Int(std::string_view key, int64_t value) {
  Key(key);
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out_.append(buf, end);
  return *this;
}

JsonObjectWriter& JsonObjectWriter::Bool(std::string_view key, bool value) {
  Key(key);
  out_ += value ? "true" : "false";
  return *this;
}

JsonObjectWriter& JsonObjectWriter::Raw(std::string_view key, std::string_view raw) {
  Key(key);
  out_ += raw;
  return *this;
}

}  // namespace adserver
