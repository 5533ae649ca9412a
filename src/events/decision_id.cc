#include "events/decision_id.h"

#include "common/crypto.h"

namespace adserver::events {
namespace {

constexpr char kHex[] = "0123456789abcdef";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsDashAt(size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

}  // namespace

void DecisionId::AppendTo(std::string& out) const {
  size_t start = out.size();
  out.resize(start + 36);
  char* p = out.data() + start;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) *p++ = '-';
    *p++ = kHex[bytes[i] >> 4];
    *p++ = kHex[bytes[i] & 15];
  }
}

std::string DecisionId::ToString() const {
  std::string out;
  AppendTo(out);
  return out;
}

std::optional<DecisionId> DecisionId::Parse(std::string_view text) {
  if (text.size() != 36) return std::nullopt;
  DecisionId id;
  size_t b = 0;
  for (size_t i = 0; i < text.size();) {
    if (IsDashAt(i)) {
      if (text[i] != '-') return std::nullopt;
      ++i;
      continue;
    }
    int hi = HexValue(text[i]);
    int lo = HexValue(text[i + 1]);
    if (hi < 0 || lo < 0 || IsDashAt(i + 1)) return std::nullopt;
    id.bytes[b++] = static_cast<uint8_t>(hi * 16 + lo);
    i += 2;
  }
  return id;
}

int64_t DecisionId::UnixMillis() const {
  int64_t ms = 0;
  for (int i = 0; i < 6; ++i) ms = (ms << 8) | bytes[i];
  return ms;
}

DecisionId NewDecisionId(int64_t unix_millis) {
  DecisionId id;
  auto ms = static_cast<uint64_t>(unix_millis < 0 ? 0 : unix_millis);
  for (int i = 0; i < 6; ++i) id.bytes[i] = static_cast<uint8_t>(ms >> (8 * (5 - i)));
  RandomBytesBuffered(id.bytes.data() + 6, 10);
  id.bytes[6] = static_cast<uint8_t>(0x70 | (id.bytes[6] & 0x0f));  // version 7
  id.bytes[8] = static_cast<uint8_t>(0x80 | (id.bytes[8] & 0x3f));  // variant 10
  return id;
}

}  // namespace adserver::events
