#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace adserver {

// Appends `s` to `out` as a JSON string literal (with quotes), escaping `"`, `\` and control
// characters. Input must be valid UTF-8 (the store validates text on the way in).
void AppendJsonString(std::string& out, std::string_view s);

// Minimal append-only JSON object writer for hot-path responses: no allocation beyond the
// output string, which callers reserve. Not a validator: callers write well-formed sequences.
class JsonObjectWriter {
 public:
  explicit JsonObjectWriter(std::string& out) : out_(out) { out_ += '{'; }
  JsonObjectWriter& String(std::string_view key, std::string_view value);
  JsonObjectWriter& Null(std::string_view key);
  JsonObjectWriter& Int(std::string_view key, int64_t value);
  JsonObjectWriter& Bool(std::string_view key, bool value);
  // Writes `raw` verbatim as the value (already-serialised JSON).
  JsonObjectWriter& Raw(std::string_view key, std::string_view raw);
  void Close() { out_ += '}'; }

 private:
  void Key(std::string_view key);
  std::string& out_;
  bool first_ = true;
};

}  // namespace adserver
