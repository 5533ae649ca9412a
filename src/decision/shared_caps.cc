#include "decision/shared_caps.h"

#include <algorithm>

#include "common/mutex.h"

namespace adserver::decision {

SharedFrequencyCaps::SharedFrequencyCaps(FrequencyCaps& local, CapCounterStore& store,
                                         size_t max_pending, size_t recent, int64_t recent_seconds)
    : local_(local),
      store_(store),
      max_pending_(max_pending),
      recent_max_(recent),
      recent_seconds_(recent_seconds) {}

void SharedFrequencyCaps::Queue(std::span<const Address> wallets, int64_t campaign_id,
                                int32_t hours) {
  Shard& shard = shards_.Local();
  MutexLock lock(shard.mu);
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
    MutexLock lock(shard->mu);
    n += shard->dropped;
  }
  return n;
}

Status SharedFrequencyCaps::Sync(int64_t now) {
  MutexLock sync_lock(sync_mu_);
  // Sum this interval's impressions per pair.
  std::unordered_map<PairKey, size_t, PairHash> index;
  std::vector<CapIncrement> batch;
  for (Shard* shard : shards_.All()) {
    std::vector<CapIncrement> taken;
    {
      MutexLock lock(shard->mu);
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
  // Remember the pairs served now, forget those not served lately (and the oldest beyond the
  // cap), and read every remembered one again.
  for (const CapIncrement& inc : batch) {
    recent_[PairKey{inc.wallet, inc.campaign_id}] = Recent{inc.hours, now};
  }
  std::erase_if(
      recent_, [&](const auto& entry) { return entry.second.last_served < now - recent_seconds_; });
  if (recent_.size() > recent_max_) {
    std::vector<int64_t> times;
    times.reserve(recent_.size());
    for (const auto& [key, r] : recent_) times.push_back(r.last_served);
    auto cut = times.begin() + static_cast<ptrdiff_t>(recent_.size() - recent_max_);
    std::nth_element(times.begin(), cut, times.end());
    const int64_t keep_from = *cut;
    std::erase_if(recent_, [&](const auto& entry) { return entry.second.last_served < keep_from; });
  }
  for (const auto& [key, r] : recent_) {
    if (index.contains(key)) continue;
    batch.push_back(CapIncrement{
        .wallet = key.wallet, .campaign_id = key.campaign_id, .hours = r.hours, .add = 0});
  }
  if (batch.empty()) return OkStatus();
  Result<std::vector<uint32_t>> totals = store_.AddAndRead(batch);
  if (!totals.ok() || totals->size() != batch.size()) {
    // Put the increments back for the next sync (what does not fit is dropped and counted).
    Shard& shard = shards_.Local();
    MutexLock lock(shard.mu);
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
