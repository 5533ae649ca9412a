#include "common/json_writer.h"

#include <charconv>

namespace adserver {

void AppendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t run_start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run_start, i - run_start);
    run_start = i + 1;
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
