#include "events/served_counters.h"

#include <algorithm>
#include <string>
#include <utility>

#include "common/mutex.h"

namespace adserver::events {
namespace {

constexpr size_t kMaxArmBytes = 255;

// splitmix64's finaliser: every input bit reaches every output bit.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

ServedCounters::ServedCounters(size_t max_keys_per_thread)
    : max_keys_(std::max<size_t>(1, max_keys_per_thread)) {}

ServedCounters::~ServedCounters() = default;

size_t ServedCounters::RowKeyHash::operator()(const RowKeyView& k) const noexcept {
  uint64_t h = Mix(static_cast<uint64_t>(k.minute) ^ Mix(static_cast<uint64_t>(k.publisher_id)));
  h = Mix(h ^ static_cast<uint64_t>(k.campaign_id) ^ Mix(static_cast<uint64_t>(k.ad_id)));
  if (!k.arm.empty()) h ^= std::hash<std::string_view>()(k.arm) * 0x9e3779b97f4a7c15ULL;
  if (!k.ad_unit_id.empty()) h = Mix(h ^ std::hash<std::string_view>()(k.ad_unit_id));
  return static_cast<size_t>(h);
}

void ServedCounters::Count(const ServedKey& key, ServeOutcome outcome, Micros spend,
                           InvalidReason invalid) {
  Shard& shard = shards_.Local();
  RowKeyView view{.minute = key.unix_seconds - ((key.unix_seconds % 60) + 60) % 60,
                  .publisher_id = key.publisher_id,
                  .campaign_id = key.campaign_id,
                  .ad_id = key.ad_id,
                  .arm = key.arm.substr(0, kMaxArmBytes),
                  .ad_unit_id = key.ad_unit_id};
  MutexLock lock(shard.mu);
  auto it = shard.rows.find(view);
  if (it == shard.rows.end()) {
    if (shard.rows.size() >= max_keys_) {
      view.ad_unit_id = kOtherAdUnit;
      it = shard.rows.find(view);
    }
    if (it == shard.rows.end()) {
      it = shard.rows
               .emplace(RowKey{.minute = view.minute,
                               .publisher_id = view.publisher_id,
                               .campaign_id = view.campaign_id,
                               .ad_id = view.ad_id,
                               .arm = std::string(view.arm),
                               .ad_unit_id = std::string(view.ad_unit_id)},
                        Counts{})
               .first;
    }
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
    Rows taken;
    {
      MutexLock lock(shard->mu);
      taken.swap(shard->rows);
    }
    for (const auto& [key, c] : taken) {
      store::RollupRow row;
      row.bucket = key.minute;
      row.publisher_id = key.publisher_id;
      row.campaign_id = key.campaign_id;
      row.ad_id = key.ad_id;
      row.arm = key.arm;
      row.ad_unit_id = key.ad_unit_id;
      row.requests = c.requests;
      row.fills = c.fills;
      row.no_fills = c.no_fills;
      row.errors = c.errors;
      row.impression_spend = c.spend;
      row.invalid_fills = c.invalid_fills;
      for (size_t r = 0; r < kInvalidReasons; ++r) {
        if (c.invalid[r] == 0) continue;
        row.invalid_fills_by_reason.emplace_back(InvalidReasonName(static_cast<InvalidReason>(r)),
                                                 c.invalid[r]);
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace adserver::events
