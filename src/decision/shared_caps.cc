#include "decision/shared_caps.h"

#include <algorithm>

namespace adserver::decision {

SharedFrequencyCaps::SharedFrequencyCaps(FrequencyCaps& local, CapCounterStore& store,
                                         size_t max_pending, size_t recent)
    : local_(local), store_(store), max_pending_(max_pending), recent_max_(recent) {}

void SharedFrequencyCaps::Queue(std::span<const Address> wallets, int64_t campaign_id,
                                int32_t hours) {
  Shard& shard = shards_.Local();
  std::lock_guard<std::mutex> lock(shard.mu);
  for (const Address& w : wallets) {
    if (shard.pending.size() >= max_pending_) {
      ++shard.dropped;
      continue;
    }
    shard.pending.push_back(
        CapIncrement{.wallet = w, .campaign_id = campaign_id, .hours = hours, .add = 1});
  }
}

uint64_t SharedFrequencyCaps::dropped() const {
  uint64_t n = 0;
  for (Shard* shard : shards_.All()) {
    std::lock_guard<std::mutex> lock(shard->mu);
    n += shard->dropped;
  }
  return n;
}

Status SharedFrequencyCaps::Sync(int64_t now) {
  std::lock_guard<std::mutex> sync_lock(sync_mu_);
  // Sum this interval's impressions per pair.
  std::unordered_map<PairKey, size_t, PairHash> index;
  std::vector<CapIncrement> batch;
  for (Shard* shard : shards_.All()) {
    std::vector<CapIncrement> taken;
    {
      std::lock_guard<std::mutex> lock(shard->mu);
      taken.swap(shard->pending);
    }
    for (const CapIncrement& inc : taken) {
      PairKey key{inc.wallet, inc.campaign_id};
      auto [it, added] = index.emplace(key, batch.size());
      if (added) {
        batch.push_back(inc);
      } else {
        batch[it->second].add += inc.add;
        batch[it->second].hours = inc.hours;
      }
    }
  }
  // Remember the pairs served now; read every remembered one again.
  for (const CapIncrement& inc : batch) {
    PairKey key{inc.wallet, inc.campaign_id};
    auto [it, added] = recent_.emplace(key, inc.hours);
    if (added) recent_order_.push_back(key);
    it->second = inc.hours;
  }
  while (recent_order_.size() > recent_max_) {
    recent_.erase(recent_order_.front());
    recent_order_.erase(recent_order_.begin());
  }
  for (const PairKey& key : recent_order_) {
    if (index.contains(key)) continue;
    batch.push_back(CapIncrement{
        .wallet = key.wallet, .campaign_id = key.campaign_id, .hours = recent_[key], .add = 0});
  }
  if (batch.empty()) return OkStatus();
  Result<std::vector<uint32_t>> totals = store_.AddAndRead(batch);
  if (!totals.ok() || totals->size() != batch.size()) {
    // Put the increments back for the next sync (what does not fit is dropped and counted).
    Shard& shard = shards_.Local();
    std::lock_guard<std::mutex> lock(shard.mu);
    for (const CapIncrement& inc : batch) {
      if (inc.add == 0) continue;
      if (shard.pending.size() >= max_pending_) {
        shard.dropped += inc.add;
        continue;
      }
      shard.pending.push_back(inc);
    }
    return totals.ok() ? InternalError("cap store answered a different number of counts")
                       : totals.status();
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    local_.RaiseTo(batch[i].wallet, batch[i].campaign_id, batch[i].hours, (*totals)[i], now);
  }
  return OkStatus();
}

}  // namespace adserver::decision
