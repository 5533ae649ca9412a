#include "dataset.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "app/data_dir.h"
#include "common/check.h"
#include "common/clock.h"
#include "common/crypto.h"
#include "common/splitmix64.h"
#include "demo/demo.h"
#include "store/sqlite/sqlite_events_store.h"

namespace adserver::bench {
namespace {

// SplitMix64: tiny, fast and the same on every platform (std distributions are not).
class Rng {
 public:
  explicit Rng(uint64_t seed) : bits_(seed) {}
  uint64_t Next() { return bits_.Next(); }
  // Uniform in [lo, hi].
  int64_t Uniform(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  SplitMix64 bits_;
};

uint64_t Mix(uint64_t a, uint64_t b) { return Rng(a * 0x100000001B3ULL ^ b).Next(); }

// Zipf(s) over ranks 0..n-1 by inverse CDF.
class Zipf {
 public:
  Zipf(int n, double s) {
    cdf_.reserve(n);
    double sum = 0;
    for (int k = 0; k < n; ++k) cdf_.push_back(sum += 1.0 / std::pow(k + 1, s));
    for (double& c : cdf_) c /= sum;
  }
  int Sample(Rng& rng) const {
    auto it = std::lower_bound(cdf_.begin(), cdf_.end(), rng.Unit());
    return static_cast<int>(std::min<ptrdiff_t>(it - cdf_.begin(), cdf_.size() - 1));
  }

 private:
  std::vector<double> cdf_;
};

// Wallets: Zipf s=1.0 (a few huge projects: stablecoins, Uniswap). Campaign targets: milder
// skew, advertisers spread over more projects than users do.
constexpr double kWalletZipf = 1.0;
constexpr double kCampaignZipf = 0.7;
constexpr int64_t kChains[] = {1, 8453, 42161, 10};

// The real projects of the demo registry, read back from a throwaway demo data directory
// (opened like `adserver serve` opens one) so the list is not copied here.
const std::vector<store::ProjectRecord>& RealProjects() {
  static const std::vector<store::ProjectRecord> projects = [] {
    char dir[] = "/tmp/adserver-bench-registry.XXXXXX";
    ADS_CHECK(mkdtemp(dir) != nullptr) << "mkdtemp failed";
    std::vector<store::ProjectRecord> list;
    Status st = [&]() -> Status {
      ADS_ASSIGN_OR_RETURN(store::Stores store, app::OpenStore(dir));
      ADS_ASSIGN_OR_RETURN(auto events, store::SqliteEventsStore::Open(app::DatabasePath(dir)));
      FakeClock clock;
      ADS_RETURN_IF_ERROR(demo::SeedDemo(*store.inventory, *store.activity, *events, clock,
                                         "http://127.0.0.1", /*wallets=*/0)
                              .status());
      ADS_ASSIGN_OR_RETURN(list, store.inventory->ListProjects());
      return OkStatus();
    }();
    if (!st.ok()) {
      // Keeps the harness usable while the demo is broken; the summary line says so.
      std::fprintf(stderr, "warning: demo registry unavailable (%s); all projects synthetic\n",
                   st.message().c_str());
      list.clear();
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return list;
  }();
  return projects;
}

store::ProjectRecord MakeProject(const DatasetOptions& o, int k) {
  const auto& real = RealProjects();
  store::ProjectRecord p;
  if (k < static_cast<int>(real.size())) {
    p = real[k];
  } else {
    // Synthetic, clearly named; one made-up contract on one of the common chains.
    char slug[32];
    std::snprintf(slug, sizeof slug, "synth-%04d", k);
    p.slug = slug;
    p.name = "Synthetic project " + std::to_string(k);
    p.category = "synthetic";
    Rng rng(Mix(o.seed, 0x5000 + k));
    Address a;
    for (auto& b : a.bytes) b = static_cast<uint8_t>(rng.Next());
    p.contracts.push_back({kChains[k % 4], a});
  }
  p.id = k + 1;
  p.created_at = p.updated_at = o.now;
  return p;
}

std::string Repeat(std::string_view word, size_t bytes) {
  std::string out;
  while (out.size() < bytes) {
    out += word;
    out += ' ';
  }
  out.resize(bytes);
  return out;
}

void AddAds(const DatasetOptions& o, const store::CampaignRecord& c, Rng& rng,
            store::CatalogData& data) {
  int n = static_cast<int>(rng.Uniform(1, 3));
  for (int j = 0; j < n; ++j) {
    store::AdRecord ad;
    ad.id = static_cast<store::Id>(data.ads.size()) + 1;
    ad.campaign_id = c.id;
    ad.headline = "Campaign " + std::to_string(c.id) + " ad " + std::to_string(j);
    // About 5 % of ads have content of 400+ characters (not served by the earlier variant).
    size_t content = rng.Uniform(0, 19) == 0 ? 420 : static_cast<size_t>(rng.Uniform(60, 200));
    ad.content = "**Bold** offer for *you*.\\n* " + Repeat("benchmark", content);
    ad.cta_url = "https://example.com/c/" + std::to_string(c.id) + "?utm_source=adserver";
    ad.cta_label = "Learn more";
    for (int f = 0; f < kImageFormatsWithImage; ++f) {
      // About 10 % of ads lack one given format.
      if (rng.Uniform(0, 9) == 0) continue;
      ad.images[f] = "https://cdn.example.com/ads/" + std::to_string(ad.id) + "-" +
                     std::string(ImageFormatName(static_cast<ImageFormat>(f))) + ".png";
    }
    ad.weight = static_cast<int32_t>(rng.Uniform(1, 10));
    ad.created_at = ad.updated_at = o.now;
    data.ads.push_back(std::move(ad));
  }
}

store::CampaignRecord MakeCampaign(const DatasetOptions& o, int i, const Zipf& zipf, Rng& rng) {
  store::CampaignRecord c;
  c.id = i + 1;
  c.community_id = 1 + i % o.communities;
  c.name = "Bench campaign " + std::to_string(c.id);
  c.status = CampaignStatus::kActive;
  uint64_t kind = rng.Uniform(0, 9);
  c.pricing_model = kind < 7   ? PricingModel::kCpm
                    : kind < 9 ? PricingModel::kCpc
                               : PricingModel::kCpa;
  // Log-uniform bids: CPM 0.5..20, CPC 0.05..2, CPA 1..50 (currency units).
  double lo = c.pricing_model == PricingModel::kCpm   ? 0.5
              : c.pricing_model == PricingModel::kCpc ? 0.05
                                                      : 1;
  double bid = lo * std::exp(rng.Unit() * std::log(40.0));
  c.bid_micros = static_cast<Micros>(bid * kMicrosPerUnit);
  int targets = static_cast<int>(rng.Uniform(1, 10));
  while (static_cast<int>(c.target_projects.size()) < targets) {
    store::Id p = zipf.Sample(rng) + 1;
    if (std::find(c.target_projects.begin(), c.target_projects.end(), p) == c.target_projects.end())
      c.target_projects.push_back(p);
  }
  if (rng.Uniform(0, 9) < 3) {  // 30 % exclude a project (often their own)
    store::Id p = zipf.Sample(rng) + 1;
    if (std::find(c.target_projects.begin(), c.target_projects.end(), p) == c.target_projects.end())
      c.exclude_projects.push_back(p);
  }
  if (rng.Uniform(0, 4) == 0) c.chains = {1};
  static constexpr int kRecency[] = {30, 90, 180, 365, 0};
  int recency = kRecency[rng.Uniform(0, 4)];
  if (recency > 0) c.recency_days = recency;
  if (rng.Uniform(0, 19) == 0) c.ends_at = o.now - 86400;  // 5 % already ended
  // CPA campaigns count onchain conversions on one project (drawn without the RNG, so the rest
  // of the dataset is the one earlier formats had): their serves record exposures.
  if (c.pricing_model == PricingModel::kCpa) {
    c.conversion = store::ConversionRule{.projects = {1 + c.id % o.projects}};
  }
  c.created_at = c.updated_at = o.now;
  return c;
}

// The wallet-popularity distribution over `projects` projects. Cached per thread: no lock per
// wallet, and no thread can replace another's while it samples.
const Zipf& WalletZipf(int projects) {
  thread_local std::unique_ptr<Zipf> zipf;
  thread_local int zipf_projects = -1;
  if (!zipf || zipf_projects != projects) {
    zipf = std::make_unique<Zipf>(projects, kWalletZipf);
    zipf_projects = projects;
  }
  return *zipf;
}

}  // namespace

int RealProjectCount() { return static_cast<int>(RealProjects().size()); }

store::CatalogData MakeCatalogData(const DatasetOptions& o, const std::string& live_key) {
  store::CatalogData data;
  store::PublisherRecord publisher;
  publisher.id = 1;
  publisher.name = "Bench Publisher";
  publisher.created_at = publisher.updated_at = o.now;
  data.publishers.push_back(publisher);
  store::ApiKeyRecord key;
  key.id = 1;
  key.publisher_id = 1;
  key.hash = Sha256(live_key);
  key.prefix = live_key.substr(0, 8);
  key.created_at = o.now;
  data.api_keys.push_back(key);
  for (int i = 0; i < o.communities; ++i) {
    store::CommunityRecord c;
    c.id = i + 1;
    c.name = "Community " + std::to_string(c.id);
    c.logo_url = "https://cdn.example.com/logos/" + std::to_string(c.id) + ".png";
    c.created_at = c.updated_at = o.now;
    data.communities.push_back(c);
  }
  for (int k = 0; k < o.projects; ++k) data.projects.push_back(MakeProject(o, k));
  Zipf zipf(o.projects, kCampaignZipf);
  Rng rng(Mix(o.seed, 0xCA));
  for (int i = 0; i < o.campaigns; ++i) {
    data.campaigns.push_back(MakeCampaign(o, i, zipf, rng));
    AddAds(o, data.campaigns.back(), rng, data);
  }
  // Conversions count only on projects verified as the campaign's community's own (issue 39):
  // each CPA campaign's conversion project belongs to its community (with the default sizes,
  // 200 projects and 100 communities, no two communities name the same one; a later one would
  // not convert and, CPA, not serve).
  for (const store::CampaignRecord& c : data.campaigns) {
    if (!c.conversion) continue;
    for (store::Id project : c.conversion->projects) {
      store::ProjectRecord& p = data.projects[static_cast<size_t>(project - 1)];
      if (!p.owner_community_id) p.owner_community_id = c.community_id;
    }
  }
  return data;
}

Address WalletAt(const DatasetOptions& o, int64_t i) {
  Rng rng(Mix(o.seed, 0xA11E7000000ULL + static_cast<uint64_t>(i)));
  Address a;
  for (size_t b = 0; b < a.bytes.size(); b += 8) {
    uint64_t v = rng.Next();
    for (size_t k = 0; k < 8 && b + k < a.bytes.size(); ++k) a.bytes[b + k] = uint8_t(v >> (8 * k));
  }
  return a;
}

void AppendWalletActivity(const DatasetOptions& o, int64_t i,
                          std::vector<store::ActivityRecord>& out) {
  const Zipf& zipf = WalletZipf(o.projects);
  Rng rng(Mix(o.seed ^ 0xB0B, static_cast<uint64_t>(i)));
  // 1..20 projects, skewed to few: most wallets touch a handful.
  int n = 1 + static_cast<int>(std::min(19.0, -std::log(1 - rng.Unit()) * 4.0));
  n = std::min(n, o.projects);
  Address wallet = WalletAt(o, i);
  size_t first = out.size();
  while (static_cast<int>(out.size() - first) < n) {
    store::Id p = zipf.Sample(rng) + 1;
    bool seen = false;
    for (size_t j = first; j < out.size(); ++j) seen |= out[j].project_id == p;
    if (seen) continue;
    store::ActivityRecord r;
    r.wallet = wallet;
    r.project_id = p;
    // Real projects: their first contract's chain; synthetic: by id.
    r.chain_id = p <= RealProjectCount() ? RealProjects()[p - 1].contracts.front().chain_id
                                         : kChains[(p - 1) % 4];
    // Age 0..365 days, skewed to recent.
    int64_t age = static_cast<int64_t>(365 * rng.Unit() * rng.Unit());
    r.last_seen = o.now - age * 86400 - rng.Uniform(0, 86399);
    r.count = rng.Uniform(1, 50);
    out.push_back(r);
  }
}

decision::ActivityIndex MakeActivityIndex(const DatasetOptions& o) {
  decision::ActivityIndex index;
  std::vector<store::ActivityRecord> rows;
  for (int64_t i = 0; i < o.wallets; ++i) {
    rows.clear();
    AppendWalletActivity(o, i, rows);
    for (const auto& r : rows) {
      index.Add(r.wallet, {.project_id = static_cast<uint32_t>(r.project_id),
                           .chain_id = static_cast<uint32_t>(r.chain_id),
                           .last_seen_day = static_cast<uint32_t>(DayOf(r.last_seen)),
                           .count = static_cast<uint32_t>(r.count)});
    }
  }
  index.Finalize();
  return index;
}

}  // namespace adserver::bench
