#pragma once

// The on-disk value of one wallet in the LMDB activity index: its interactions sorted by
// (project id, chain id), each as varint(project id delta), varint(chain id),
// 2-byte little-endian last-seen day, varint(count). Typically 6-8 bytes per interaction.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "decision/activity_index.h"

namespace adserver::store::detail {

// Largest day the 2-byte field holds (2149-06-06); later days are clamped.
inline constexpr uint32_t kMaxStoredDay = 0xFFFF;

// The stored day of a unix time: 0 for times at or before the epoch, at most kMaxStoredDay.
inline uint32_t StoredDay(int64_t unix_seconds) {
  if (unix_seconds <= 0) return 0;
  return static_cast<uint32_t>(std::min<int64_t>(unix_seconds / 86400, kMaxStoredDay));
}
// An id or count of an ActivityRecord as stored: clamped to [0, UINT32_MAX].
inline uint32_t Clamp32(int64_t v) {
  return static_cast<uint32_t>(std::clamp<int64_t>(v, 0, int64_t{UINT32_MAX}));
}

// Appends the encoding of `sorted` (sorted by project id, then chain id) to `out`.
void EncodeInteractions(std::span<const decision::Interaction> sorted, std::string& out);
// Appends the decoded interactions to `out`. Returns false (out unspecified) if `data` is not
// a valid encoding.
bool DecodeInteractions(std::span<const uint8_t> data, std::vector<decision::Interaction>& out);
// Merges `update` into `base` (both sorted): same (project, chain) -> max day, summed count
// (saturating); the result stays sorted.
void MergeInteractions(std::vector<decision::Interaction>& base,
                       std::span<const decision::Interaction> update);
// Sorts by (project id, chain id) and merges duplicates as MergeInteractions does.
void NormalizeInteractions(std::vector<decision::Interaction>& items);

}  // namespace adserver::store::detail
