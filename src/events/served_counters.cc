#include "events/served_counters.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

namespace adserver::events {
namespace {

constexpr std::string_view kOtherAdUnit = "~other";
constexpr size_t kMaxArmBytes = 255;

void PutInt(std::string& out, int64_t v) {
  char bytes[8];
  std::memcpy(bytes, &v, 8);
  out.append(bytes, 8);
}

int64_t GetInt(const char* p) {
  int64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// minute | publisher | campaign | ad | arm length (1) | arm | adUnitId.
void EncodeKey(const ServedKey& key, std::string_view ad_unit, std::string& out) {
  out.clear();
  int64_t minute = key.unix_seconds - ((key.unix_seconds % 60) + 60) % 60;
  PutInt(out, minute);
  PutInt(out, key.publisher_id);
  PutInt(out, key.campaign_id);
  PutInt(out, key.ad_id);
  std::string_view arm = key.arm.substr(0, kMaxArmBytes);
  out += static_cast<char>(arm.size());
  out += arm;
  out += ad_unit;
}

store::RollupRow DecodeKey(const std::string& k) {
  store::RollupRow row;
  row.bucket = GetInt(k.data());
  row.publisher_id = GetInt(k.data() + 8);
  row.campaign_id = GetInt(k.data() + 16);
  row.ad_id = GetInt(k.data() + 24);
  size_t arm_size = static_cast<uint8_t>(k[32]);
  row.arm = k.substr(33, arm_size);
  row.ad_unit_id = k.substr(33 + arm_size);
  return row;
}

}  // namespace

ServedCounters::ServedCounters(size_t max_keys_per_thread)
    : max_keys_(std::max<size_t>(1, max_keys_per_thread)) {}

ServedCounters::~ServedCounters() = default;

void ServedCounters::Count(const ServedKey& key, ServeOutcome outcome, Micros spend,
                           InvalidReason invalid) {
  thread_local std::string encoded;
  Shard& shard = shards_.Local();
  EncodeKey(key, key.ad_unit_id, encoded);
  std::lock_guard<std::mutex> lock(shard.mu);
  auto it = shard.rows.find(encoded);
  if (it == shard.rows.end()) {
    if (shard.rows.size() >= max_keys_) {
      EncodeKey(key, kOtherAdUnit, encoded);
      it = shard.rows.find(encoded);
    }
    if (it == shard.rows.end()) it = shard.rows.emplace(encoded, Counts{}).first;
  }
  Counts& c = it->second;
  ++c.requests;
  switch (outcome) {
    case ServeOutcome::kFill:
      if (invalid == InvalidReason::kNone) {
        ++c.fills;
        c.spend += spend;
      } else {
        ++c.invalid_fills;
        ++c.invalid[static_cast<size_t>(invalid)];
      }
      break;
    case ServeOutcome::kNoFill:
      ++c.no_fills;
      break;
    case ServeOutcome::kError:
      ++c.errors;
      break;
  }
}

std::vector<store::RollupRow> ServedCounters::Take() {
  std::vector<store::RollupRow> rows;
  for (Shard* shard : shards_.All()) {
    std::unordered_map<std::string, Counts> taken;
    {
      std::lock_guard<std::mutex> lock(shard->mu);
      taken.swap(shard->rows);
    }
    for (const auto& [key, c] : taken) {
      store::RollupRow row = DecodeKey(key);
      row.requests = c.requests;
      row.fills = c.fills;
      row.no_fills = c.no_fills;
      row.errors = c.errors;
      row.impression_spend = c.spend;
      row.invalid_fills = c.invalid_fills;
      for (size_t r = 0; r < kInvalidReasons; ++r) {
        if (c.invalid[r] == 0) continue;
        row.invalid_fills_by_reason.emplace_back(
            InvalidReasonName(static_cast<InvalidReason>(r)), c.invalid[r]);
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace adserver::events
