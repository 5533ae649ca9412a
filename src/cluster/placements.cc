#include "cluster/placements.h"

#include <algorithm>

namespace adserver::cluster {
namespace {
// Rows per read of the other nodes' (a sync that reads this many reads the rest next time).
constexpr size_t kReadLimit = 10'000;
}  // namespace

ClusterPlacements::ClusterPlacements(store::PlacementCountersStore& store, size_t max_pairs)
    : store_(store), max_pairs_(std::max<size_t>(max_pairs, 1)) {}

Status ClusterPlacements::Start() {
  ADS_ASSIGN_OR_RETURN(std::vector<store::PlacementCountersRow> own, store_.LoadOwn());
  {
    MutexLock lock(mu_);
    for (const store::PlacementCountersRow& row : own) {
      if (own_.size() >= max_pairs_) break;
      own_[{row.campaign_id, row.publisher_id, row.ad_unit}] = {.impressions = row.impressions,
                                                                .events = row.events};
      own_units_ += row.ad_unit != 0;
    }
  }
  for (bool more = true; more;) {
    ADS_ASSIGN_OR_RETURN(auto read, ReadOthers(watermark_, /*feed=*/nullptr));
    watermark_ = read.first;
    more = read.second;
  }
  read_from_ = watermark_;
  return OkStatus();
}

void ClusterPlacements::Note(const decision::PlacementKey& key, int64_t impressions,
                             int64_t events) {
  if (impressions == 0 && events == 0) return;
  MutexLock lock(mu_);
  auto it = own_.find(key);
  if (it == own_.end()) {
    // adUnitIds are the client's strings: units take at most half the pairs, further units'
    // counts are shared under their publisher.
    const bool unit = key.unit != 0 && own_units_ < max_pairs_ / 2;
    const decision::PlacementKey shared =
        unit || key.unit == 0 ? key : decision::PlacementKey{key.campaign_id, key.publisher_id, 0};
    it = own_.find(shared);
    if (it == own_.end()) {
      if (own_.size() >= max_pairs_) {
        ++dropped_own_;
        return;
      }
      it = own_.emplace(shared, Count{}).first;
      own_units_ += unit;
    }
  }
  it->second.impressions += impressions;
  it->second.events += events;
  it->second.dirty = true;
}

Status ClusterPlacements::Sync(decision::PlacementFeed& feed) {
  std::vector<store::PlacementCountersRow> changed;
  {
    MutexLock lock(mu_);
    for (auto& [key, count] : own_) {
      if (!count.dirty) continue;
      changed.push_back({.campaign_id = key.campaign_id,
                         .publisher_id = key.publisher_id,
                         .ad_unit = key.unit,
                         .impressions = count.impressions,
                         .events = count.events});
      count.dirty = false;
    }
  }
  Status saved = store_.SaveOwn(changed);
  if (!saved.ok()) {
    MutexLock lock(mu_);  // saved with the next sync (the values are absolute)
    for (const store::PlacementCountersRow& row : changed) {
      own_[{row.campaign_id, row.publisher_id, row.ad_unit}].dirty = true;
    }
  }
  ADS_ASSIGN_OR_RETURN(auto read, ReadOthers(read_from_, &feed));
  const int64_t previous = watermark_;
  watermark_ = std::max(watermark_, read.first);
  // Cut at the limit: go on from where it stopped. Else read again from this sync's start
  // next time (a seq drawn earlier may commit later).
  read_from_ = read.second ? read.first : previous;
  return saved;
}

Result<std::pair<int64_t, bool>> ClusterPlacements::ReadOthers(int64_t after,
                                                               decision::PlacementFeed* feed) {
  ADS_ASSIGN_OR_RETURN(std::vector<store::PlacementCountersRow> rows,
                       store_.LoadOthersAfter(after, kReadLimit));
  int64_t highest = after;
  for (const store::PlacementCountersRow& row : rows) {
    highest = std::max(highest, row.seq);
    // A node's number is kept only with a row of it followed, so both maps stay bounded.
    auto node = nodes_.find(row.node_id);
    const uint32_t number =
        node != nodes_.end() ? node->second : static_cast<uint32_t>(nodes_.size());
    const SeenKey key{.node = number, .key = {row.campaign_id, row.publisher_id, row.ad_unit}};
    auto it = seen_.find(key);
    if (it == seen_.end()) {
      if (seen_.size() >= 4 * max_pairs_) {
        dropped_seen_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      if (node == nodes_.end()) nodes_.emplace(row.node_id, number);
      it = seen_.emplace(key, Count{}).first;
      followed_.store(seen_.size(), std::memory_order_relaxed);
    }
    // Impressions only grow (a row that went down started over: its count is what it holds).
    const int64_t impressions = std::max<int64_t>(row.impressions - it->second.impressions, 0);
    const int64_t events = row.events - it->second.events;
    it->second.impressions = row.impressions;
    it->second.events = row.events;
    if (feed != nullptr && (impressions != 0 || events != 0)) {
      feed->Add(key.key, impressions, events);
    }
  }
  return std::pair<int64_t, bool>{highest, rows.size() >= kReadLimit};
}

int64_t ClusterPlacements::dropped() const {
  MutexLock lock(mu_);
  return dropped_own_ + dropped_seen_.load(std::memory_order_relaxed);
}

size_t ClusterPlacements::own_pairs() const {
  MutexLock lock(mu_);
  return own_.size();
}

}  // namespace adserver::cluster
