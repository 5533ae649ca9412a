#include "ingest/snapshot_publisher.h"

#include <array>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/thread_setup.h"
#include "ingest/catalog_builder.h"

namespace adserver::ingest {

namespace {

// How long a publish waits for the requests still holding the replaced version before it lets
// them free it (ReleaseWhenUnused): a request holds it for microseconds.
constexpr std::chrono::milliseconds kReleasePatience{50};

// An unambiguous byte encoding of CatalogData, hashed to tell whether a catalog rebuild would
// produce anything new. Every field is included: a change to any of them is a change.
void Put(std::string& out, std::string_view s);
void Put(std::string& out, const Address& a);
void Put(std::string& out, const Sha256Digest& d);
void Put(std::string& out, const store::ContractRef& c);
void Put(std::string& out, const store::FrequencyCap& f);
void Put(std::string& out, const std::array<std::string, kImageFormatsWithImage>& images);
void Put(std::string& out, const store::ConversionRule& r);  // used by Put(optional)

template <typename T>
requires std::is_arithmetic_v<T> || std::is_enum_v<T>
void Put(std::string& out, T v) {
  auto wide = static_cast<int64_t>(v);
  out.append(reinterpret_cast<const char*>(&wide), sizeof wide);
}
template <typename T>
void Put(std::string& out, const std::optional<T>& v) {
  Put(out, v.has_value());
  if (v) Put(out, *v);
}
template <typename T>
void Put(std::string& out, const std::vector<T>& v) {
  Put(out, v.size());
  for (const T& item : v) Put(out, item);
}
void Put(std::string& out, std::string_view s) {
  Put(out, s.size());
  out.append(s);
}
void Put(std::string& out, const Address& a) {
  out.append(reinterpret_cast<const char*>(a.bytes.data()), a.bytes.size());
}
void Put(std::string& out, const Sha256Digest& d) {
  out.append(reinterpret_cast<const char*>(d.data()), d.size());
}
void Put(std::string& out, const store::ContractRef& c) {
  Put(out, c.chain_id);
  Put(out, c.address);
}
void Put(std::string& out, const store::FrequencyCap& f) {
  Put(out, f.count);
  Put(out, f.hours);
}
void Put(std::string& out, const store::ConversionRule& r) {
  Put(out, r.projects);
  Put(out, r.kind);
  Put(out, r.returning_after_days);
  Put(out, r.window_days);
  Put(out, r.count_once_per_person);
}
void Put(std::string& out, const std::array<std::string, kImageFormatsWithImage>& images) {
  for (const std::string& image : images) Put(out, image);
}

template <typename... T>
void PutAll(std::string& out, const T&... fields) {
  (Put(out, fields), ...);
}

void PutRecords(std::string& out, const store::CatalogData& data) {
  Put(out, data.publishers.size());
  for (const auto& p : data.publishers) {
    PutAll(out, p.id, p.name, p.allowed_origins, p.blocked_communities, p.created_at, p.updated_at);
    PutAll(out, p.allowed_communities, p.category_opt_ins, p.floor_cpm_micros, p.ab_arms);
    Put(out, p.rate_limit.has_value());
    if (p.rate_limit) {  // per_second in millionths: Put of a number keeps its integer part
      PutAll(out, std::llround(p.rate_limit->per_second * 1e6), p.rate_limit->burst);
    }
  }
  Put(out, data.api_keys.size());
  for (const auto& k : data.api_keys) {
    PutAll(out, k.id, k.publisher_id, k.hash, k.prefix, k.test, k.created_at, k.revoked_at);
  }
  Put(out, data.communities.size());
  for (const auto& c : data.communities) {
    PutAll(out, c.id, c.name, c.logo_url, c.created_at, c.updated_at);
    Put(out, c.review_status);  // a review within the community's second must rebuild too
    Put(out, c.approved.has_value());
    if (c.approved) PutAll(out, c.approved->name, c.approved->logo_url);
  }
  Put(out, data.advertiser_keys.size());
  for (const auto& k : data.advertiser_keys) {
    PutAll(out, k.id, k.community_id, k.hash, k.prefix, k.test, k.created_at, k.revoked_at);
  }
  Put(out, data.projects.size());
  for (const auto& p : data.projects) {
    PutAll(out, p.id, p.slug, p.name, p.logo_url, p.category, p.contracts, p.created_at,
           p.updated_at, p.owner_community_id);
  }
}

void PutCampaignsAndAds(std::string& out, const store::CatalogData& data) {
  Put(out, data.campaigns.size());
  for (const auto& c : data.campaigns) {
    PutAll(out, c.id, c.community_id, c.name, c.status, c.starts_at, c.ends_at, c.pricing_model,
           c.bid_micros, c.total_budget_micros, c.daily_budget_micros, c.target_projects,
           c.exclude_projects, c.chains, c.recency_days, c.frequency_cap, c.created_at,
           c.updated_at);
    PutAll(out, c.category, c.allowed_publishers, c.pacing, c.advertiser_project,
           c.exclude_existing_users, c.conversion, c.explore, c.archived);
  }
  Put(out, data.ads.size());
  for (const auto& a : data.ads) {
    PutAll(out, a.id, a.campaign_id, a.headline, a.content, a.cta_url, a.cta_label, a.images,
           a.weight, a.status, a.created_at, a.updated_at);
    PutAll(out, a.ab_arm, a.archived);
    Put(out, a.review_status);  // a review within the ad's second must rebuild too
    Put(out, a.approved.has_value());
    if (a.approved) {
      PutAll(out, a.approved->headline, a.approved->content, a.approved->cta_url,
             a.approved->cta_label, a.approved->images);
    }
  }
}

Sha256Digest DigestOf(const store::CatalogData& data) {
  std::string bytes;
  PutRecords(bytes, data);
  PutCampaignsAndAds(bytes, data);
  return Sha256(bytes);
}

int64_t MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

}  // namespace

SnapshotPublisher::SnapshotPublisher(store::InventoryStore& inventory,
                                     store::ActivityStore& wallets,
                                     Published<decision::Catalog>& catalogs,
                                     Published<decision::ActivityIndex>& activity,
                                     const SnapshotOptions& options)
    : inventory_(inventory),
      wallets_(wallets),
      catalogs_(catalogs),
      activity_(activity),
      options_(options) {
  ADS_CHECK(InitCrypto()) << "libsodium cannot be initialised";
}

SnapshotPublisher::~SnapshotPublisher() { Stop(); }

Status SnapshotPublisher::LoadNow() {
  MutexLock lock(refresh_mu_);
  // Counters are read before the data, so a write racing with the build is seen next time.
  ADS_ASSIGN_OR_RETURN(uint64_t catalog_counter, inventory_.ChangeCounter());
  ADS_ASSIGN_OR_RETURN(uint64_t activity_counter, wallets_.ActivityChangeCounter());
  ADS_RETURN_IF_ERROR(RebuildCatalogLocked(catalog_counter, /*force=*/true));
  return RebuildActivityLocked(activity_counter);
}

void SnapshotPublisher::Start() {
  ADS_CHECK(!thread_.joinable()) << "SnapshotPublisher started twice";
  {
    MutexLock lock(mu_);
    running_ = true;
  }
  thread_ = std::thread([this] {
    NameThisThread("snapshots");
    LowerThisThreadPriority();
    Run();
  });
}

void SnapshotPublisher::NotifyChanged() {
  {
    MutexLock lock(mu_);
    wake_ = true;
  }
  cv_.NotifyOne();
}

Status SnapshotPublisher::RefreshNow() {
  {
    MutexLock lock(mu_);
    if (running_ && std::this_thread::get_id() != thread_id_) {
      // The publisher's thread builds (background priority, one thread's memory) and this
      // caller waits for a refresh that began after its request; concurrent callers share one.
      const uint64_t ticket = ++requested_;
      wake_ = true;
      cv_.NotifyAll();
      done_cv_.Wait(mu_, [&]() ADS_REQUIRES(mu_) { return completed_ >= ticket || !running_; });
      if (completed_ >= ticket) return last_status_;
      // Stopped meanwhile: build here.
    }
  }
  MutexLock lock(refresh_mu_);
  return RefreshLocked();
}

void SnapshotPublisher::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
  {
    MutexLock lock(mu_);
    running_ = false;
  }
  done_cv_.NotifyAll();
}

void SnapshotPublisher::Run() {
  MutexLock lock(mu_);
  thread_id_ = std::this_thread::get_id();
  while (true) {
    cv_.WaitFor(mu_, options_.poll_interval, [this]() ADS_REQUIRES(mu_) { return stop_ || wake_; });
    if (stop_) {
      // Callers still waiting build for themselves (RefreshNow) once Stop clears running_.
      return;
    }
    wake_ = false;
    const uint64_t covers = requested_;  // requests made before this refresh began
    lock.Unlock();
    Status refreshed;
    {
      MutexLock refresh(refresh_mu_);
      refreshed = RefreshLocked();
    }
    if (!refreshed.ok()) {
      ADS_LOG(warn, "snapshot refresh failed; previous snapshot stays", "status", refreshed);
    }
    lock.Lock();
    completed_ = covers;
    last_status_ = refreshed;
    done_cv_.NotifyAll();
  }
}

Status SnapshotPublisher::RefreshLocked() {
  ADS_ASSIGN_OR_RETURN(uint64_t catalog_counter, inventory_.ChangeCounter());
  ADS_ASSIGN_OR_RETURN(uint64_t activity_counter, wallets_.ActivityChangeCounter());
  Status catalog_status;
  if (catalog_counter != catalog_counter_) {
    catalog_status = RebuildCatalogLocked(catalog_counter, /*force=*/false);
  }
  Status activity_status;
  if (activity_counter != activity_counter_) {
    activity_status = RebuildActivityLocked(activity_counter);
  }
  return catalog_status.ok() ? activity_status : catalog_status;
}

Status SnapshotPublisher::RebuildCatalogLocked(uint64_t counter, bool force) {
  auto start = std::chrono::steady_clock::now();
  ADS_ASSIGN_OR_RETURN(store::CatalogData data, inventory_.LoadCatalogData());
  Sha256Digest digest = DigestOf(data);
  if (!force && catalog_digest_ == digest) {
    catalog_counter_ = counter;  // only activity changed
    return OkStatus();
  }
  ADS_ASSIGN_OR_RETURN(std::shared_ptr<const decision::Catalog> catalog,
                       BuildCatalog(data, options_.catalog));
  size_t campaigns = catalog->campaigns.size();
  size_t ads = catalog->ads.size();
  // The replaced catalog is freed here, not by the last request that held it.
  ReleaseWhenUnused(catalogs_.Exchange(std::move(catalog)), kReleasePatience);
  catalog_counter_ = counter;
  catalog_digest_ = digest;
  const int64_t ms = MillisSince(start);
  catalog_build_ms_.store(ms, std::memory_order_relaxed);
  catalog_published_at_.store(std::chrono::duration_cast<std::chrono::seconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count(),
                              std::memory_order_relaxed);
  ADS_LOG(info, "catalog published", "campaigns", campaigns, "ads", ads, "ms", ms);
  return OkStatus();
}

Status SnapshotPublisher::RebuildActivityLocked(uint64_t counter) {
  if (!options_.rebuild_activity) {
    if (activity_refresh_) ADS_RETURN_IF_ERROR(activity_refresh_());
    activity_counter_ = counter;
    return OkStatus();
  }
  auto start = std::chrono::steady_clock::now();
  ADS_ASSIGN_OR_RETURN(std::shared_ptr<const decision::ActivityIndex> index,
                       BuildActivityIndex(wallets_));
  size_t wallets = index->wallet_count();
  ReleaseWhenUnused(activity_.Exchange(std::move(index)), kReleasePatience);
  activity_counter_ = counter;
  const int64_t ms = MillisSince(start);
  activity_build_ms_.store(ms, std::memory_order_relaxed);
  ADS_LOG(info, "activity index published", "wallets", wallets, "ms", ms);
  return OkStatus();
}

}  // namespace adserver::ingest
