#include "events/exposure_recorder.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "common/log.h"
#include "common/mutex.h"
#include "common/thread_setup.h"

namespace adserver::events {
namespace {

constexpr int64_t kSecondsPerDay = 86400;

// The wallet's latest interaction (day start, Unix seconds) with any of `projects`; 0 if none.
int64_t PriorLastSeen(const decision::ActivityIndex& activity, const Address& wallet,
                      const std::vector<int64_t>& projects) {
  int64_t latest = 0;
  for (const decision::Interaction& i : activity.Lookup(wallet)) {
    if (std::find(projects.begin(), projects.end(), static_cast<int64_t>(i.project_id)) !=
        projects.end()) {
      latest = std::max(latest, static_cast<int64_t>(i.last_seen_day) * kSecondsPerDay);
    }
  }
  return latest;
}

// A nonzero 64-bit fingerprint of (wallet, campaign) (splitmix64's finalizer over the wallet's
// seeded hash and the campaign), for the coalescing table's index and tag.
uint64_t PairFingerprint(const Address& wallet, int64_t campaign_id) {
  uint64_t x = static_cast<uint64_t>(AddressHash{}(wallet)) ^
               (static_cast<uint64_t>(campaign_id) * 0x9E3779B97F4A7C15ULL);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return x | 1;
}

}  // namespace

ExposureRecorder::ExposureRecorder(store::ExposureStore& store,
                                   const Published<decision::Catalog>& catalogs,
                                   const Published<decision::ActivityIndex>& activity,
                                   const Clock& clock, ExposureRecorderOptions options)
    : store_(store),
      catalogs_(catalogs),
      activity_(activity),
      clock_(clock),
      options_(options),
      recent_(std::bit_ceil(std::max<size_t>(options.max_recent, 2))) {}

ExposureRecorder::~ExposureRecorder() { Stop(); }

void ExposureRecorder::Record(int64_t campaign_id, const store::ExposureEntry& entry,
                              std::span<const Address> wallets) {
  if (wallets.empty()) return;
  Shard& shard = shards_.Local();
  MutexLock lock(shard.mu);
  Buffer& b = shard.buffer;
  if (b.exposures.size() >= options_.max_pending_per_thread ||
      b.wallets.size() + wallets.size() > options_.max_pending_wallets_per_thread) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  b.exposures.push_back(Pending{.campaign_id = campaign_id,
                                .entry = entry,
                                .first_wallet = static_cast<uint32_t>(b.wallets.size()),
                                .wallet_count = static_cast<uint32_t>(wallets.size())});
  b.wallets.insert(b.wallets.end(), wallets.begin(), wallets.end());
}

Status ExposureRecorder::FlushNow() {
  MutexLock flush_lock(flush_mu_);
  std::vector<Shard*> shards = shards_.All();
  std::shared_ptr<const decision::Catalog> catalog = catalogs_.Current();
  std::shared_ptr<const decision::ActivityIndex> activity = activity_.Current();
  std::vector<store::ExposureWrite> writes = std::move(retry_);
  retry_.clear();
  // Swapped with each shard's buffer, so both keep their capacity.
  thread_local Buffer spare;
  for (Shard* shard : shards) {
    spare.clear();
    {
      MutexLock lock(shard->mu);
      std::swap(spare, shard->buffer);
    }
    for (const Pending& p : spare.exposures) {
      const decision::Campaign* campaign = catalog ? catalog->FindCampaign(p.campaign_id) : nullptr;
      // Prior interactions matter only to the `new` and `returning` kinds.
      bool needs_prior = campaign != nullptr && campaign->conversion && activity &&
                         campaign->conversion->kind != decision::ConversionRule::Kind::kAny;
      for (uint32_t i = 0; i < p.wallet_count; ++i) {
        const Address& wallet = spare.wallets[p.first_wallet + i];
        // Two slots per pair (2-way set-associative): the pair's own, else the older one.
        const uint64_t pair = PairFingerprint(wallet, p.campaign_id);
        RecentSlot* set = &recent_[pair & (recent_.size() - 2)];
        RecentSlot* slot = set[0].pair == pair ? &set[0] : set[1].pair == pair ? &set[1] : nullptr;
        if (slot != nullptr && p.entry.exposed_at - slot->written_at < options_.coalesce_seconds) {
          coalesced_.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
        if (slot == nullptr) slot = set[0].written_at <= set[1].written_at ? &set[0] : &set[1];
        *slot = RecentSlot{.pair = pair, .written_at = p.entry.exposed_at};
        int64_t prior =
            needs_prior ? PriorLastSeen(*activity, wallet, campaign->conversion->projects) : 0;
        writes.push_back(store::ExposureWrite{.wallet = wallet,
                                              .campaign_id = p.campaign_id,
                                              .entry = p.entry,
                                              .prior_last_seen = prior});
      }
    }
  }
  spare.clear();
  if (writes.empty()) return OkStatus();
  Status written = store_.AddExposures(writes);
  if (!written.ok()) {
    const size_t total = writes.size();
    size_t kept = 0;
    if (written.code() == Code::kUnavailable) {
      kept = std::min(writes.size(), options_.max_retry_writes);
      writes.resize(kept);  // the oldest first: they are nearest to leaving their window
      retry_ = std::move(writes);
    }
    dropped_.fetch_add(static_cast<int64_t>(total - kept), std::memory_order_relaxed);
  }
  return written;
}

void ExposureRecorder::ExpireStep(std::chrono::steady_clock::time_point now) {
  if (!sweeping_) {
    if (now < next_sweep_) return;
    next_sweep_ = now + options_.expire_interval;
    int32_t days = options_.default_window_days;
    if (auto catalog = catalogs_.Current()) {
      days = std::max(days, catalog->max_conversion_window_days());
    }
    days = std::min(days, 30);
    sweeping_ = true;
    sweep_cutoff_ = clock_.NowSeconds() - days * kSecondsPerDay;
    sweep_after_.clear();
  }
  Result<store::ExpiryStep> step =
      store_.ExpireStep(sweep_cutoff_, sweep_after_, options_.expire_step_records);
  if (!step.ok()) {
    // Retried from where it stood at the next flush.
    ADS_LOG(warn, "exposure expiry failed", "error", step.status().message());
    return;
  }
  expired_.fetch_add(step->deleted, std::memory_order_relaxed);
  sweeping_ = !step->done;
  sweep_after_ = std::move(step->resume);
}

void ExposureRecorder::Run() {
  next_sweep_ = std::chrono::steady_clock::now() + options_.first_expiry_after;
  MutexLock lock(mu_);
  while (!stop_) {
    cv_.WaitFor(mu_, options_.flush_interval, [&]() ADS_REQUIRES(mu_) { return stop_; });
    if (stop_) break;
    lock.Unlock();
    Status flushed = FlushNow();
    if (!flushed.ok()) ADS_LOG(warn, "exposures not written", "error", flushed.message());
    ExpireStep(std::chrono::steady_clock::now());
    lock.Lock();
  }
}

void ExposureRecorder::Start() {
  MutexLock lock(mu_);
  if (started_ || stop_) return;
  started_ = true;
  thread_ = std::thread([this] {
    NameThisThread("exposures");
    LowerThisThreadPriority();
    Run();
  });
}

void ExposureRecorder::Stop() {
  {
    MutexLock lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
  Status flushed = FlushNow();
  if (!flushed.ok()) ADS_LOG(error, "last exposures not written", "error", flushed.message());
}

}  // namespace adserver::events
