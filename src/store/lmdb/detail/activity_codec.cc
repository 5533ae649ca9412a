#include "store/lmdb/detail/activity_codec.h"

#include <algorithm>
#include <limits>

namespace adserver::store::detail {
namespace {

void PutVarint(uint32_t v, std::string& out) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

bool GetVarint(const uint8_t*& p, const uint8_t* end, uint32_t& v) {
  v = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (p == end) return false;
    uint8_t b = *p++;
    v |= static_cast<uint32_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

bool KeyLess(const decision::Interaction& a, const decision::Interaction& b) {
  return a.project_id != b.project_id ? a.project_id < b.project_id : a.chain_id < b.chain_id;
}

bool SameKey(const decision::Interaction& a, const decision::Interaction& b) {
  return a.project_id == b.project_id && a.chain_id == b.chain_id;
}

void Combine(decision::Interaction& into, const decision::Interaction& from) {
  into.last_seen_day = std::max(into.last_seen_day, from.last_seen_day);
  uint64_t sum = uint64_t{into.count} + from.count;
  into.count = static_cast<uint32_t>(std::min<uint64_t>(sum, std::numeric_limits<uint32_t>::max()));
}

}  // namespace

void EncodeInteractions(std::span<const decision::Interaction> sorted, std::string& out) {
  uint32_t previous = 0;
  for (const decision::Interaction& i : sorted) {
    PutVarint(i.project_id - previous, out);
    previous = i.project_id;
    PutVarint(i.chain_id, out);
    uint32_t day = std::min(i.last_seen_day, kMaxStoredDay);
    out.push_back(static_cast<char>(day & 0xFF));
    out.push_back(static_cast<char>(day >> 8));
    PutVarint(i.count, out);
  }
}

bool DecodeInteractions(std::span<const uint8_t> data, std::vector<decision::Interaction>& out) {
  const uint8_t* p = data.data();
  const uint8_t* end = p + data.size();
  uint32_t project = 0;
  while (p != end) {
    decision::Interaction i;
    uint32_t delta = 0;
    if (!GetVarint(p, end, delta) || !GetVarint(p, end, i.chain_id)) return false;
    project += delta;
    i.project_id = project;
    if (end - p < 2) return false;
    i.last_seen_day = uint32_t{p[0]} | (uint32_t{p[1]} << 8);
    p += 2;
    if (!GetVarint(p, end, i.count)) return false;
    out.push_back(i);
  }
  return true;
}

void NormalizeInteractions(std::vector<decision::Interaction>& items) {
  std::sort(items.begin(), items.end(), KeyLess);
  size_t w = 0;
  for (size_t r = 0; r < items.size(); ++r) {
    if (w > 0 && SameKey(items[w - 1], items[r])) {
      Combine(items[w - 1], items[r]);
    } else {
      items[w++] = items[r];
    }
  }
  items.resize(w);
}

void MergeInteractions(std::vector<decision::Interaction>& base,
                       std::span<const decision::Interaction> update) {
  base.insert(base.end(), update.begin(), update.end());
  NormalizeInteractions(base);
}

}  // namespace adserver::store::detail
