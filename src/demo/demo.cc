#include "demo/demo.h"

#include <sodium.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "common/address.h"
#include "common/crypto.h"
#include "common/log.h"
#include "common/password.h"
#include "demo/creatives.h"
#include "demo/traffic.h"
#include "ingest/registry_import.h"
#include "ingest/validation.h"

namespace adserver::demo {
namespace {

constexpr char kDemoPublisher[] = "Demo Publisher";

struct DemoContract {
  int64_t chain_id;
  const char* address;
};

struct DemoProject {
  const char* slug;
  const char* name;
  const char* category;
  std::vector<DemoContract> contracts;
};

// Real mainnet (and L2) contracts of well-known projects.
const std::vector<DemoProject>& DemoProjects() {
  static const std::vector<DemoProject> kProjects = {
      {"uniswap",
       "Uniswap",
       "dex",
       {{1, "0x3fC91A3afd70395Cd496C647d5a6CC9D4B2b7FAD"},
        {1, "0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45"},
        {1, "0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D"},
        {1, "0x1f9840a85d5aF5bf1D1762F925BDADdC4201F984"}}},
      {"aave",
       "Aave",
       "lending",
       {{1, "0x87870Bca3F3fD6335C3F4ce8392D69350B4fA4E2"},
        {1, "0x7d2768dE32b0b80b7a3454c06BdAc94A69DDc7A9"},
        {1, "0x7Fc66500c84A76Ad7e9c93437bFc5Ac33E2DDaE9"}}},
      {"lido",
       "Lido",
       "staking",
       {{1, "0xae7ab96520DE3A18E5e111B5EaAb095312D7fE84"},
        {1, "0x7f39C581F595B53c5cb19bD0b3f8dA6c935E2Ca0"},
        {1, "0x5A98FcBEA516Cf06857215779Fd812CA3beF1B32"}}},
      {"usdc",
       "USD Coin",
       "stablecoin",
       {{1, "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"},
        {8453, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}},
      {"tether", "Tether USD", "stablecoin", {{1, "0xdAC17F958D2ee523a2206206994597C13D831ec7"}}},
      {"makerdao",
       "MakerDAO (DAI)",
       "stablecoin",
       {{1, "0x6B175474E89094C44Da98b954EedeAC495271d0F"}}},
      {"weth", "Wrapped Ether", "token", {{1, "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"}}},
      {"chainlink", "Chainlink", "oracle", {{1, "0x514910771AF9Ca656af840dff83E8264EcF986CA"}}},
      {"ens",
       "Ethereum Name Service",
       "identity",
       {{1, "0x253553366Da8546fC250F225fe3d25d0C782303b"},
        {1, "0x00000000000C2E074eC69A0dFb2997BA6C7d2e1e"},
        {1, "0xC18360217D8F7Ab5e7c516566761Ea12Ce7F9D72"}}},
      {"opensea",
       "OpenSea (Seaport)",
       "nft",
       {{1, "0x00000000000000ADc04C56Bf30aC9d3c0aAF14dC"},
        {1, "0x0000000000000068F116a894984e2DB1123eB395"}}},
      {"curve",
       "Curve Finance",
       "dex",
       {{1, "0xD533a949740bb3306d119CC777fa900bA034cd52"},
        {1, "0xbEbc44782C7dB0a1A60Cb6fe97d0b483032FF1C7"}}},
      {"1inch", "1inch", "dex", {{1, "0x1111111254EEB25477B68fb85Ed929f73A960582"}}},
      {"compound",
       "Compound",
       "lending",
       {{1, "0xc3d688B66703497DAA19211EEdff47f25384cdc3"},
        {1, "0xc00e94Cb662C3520282E6f5717214004A7f26888"}}},
      {"arbitrum", "Arbitrum", "l2", {{42161, "0x912CE59144191C1204E64559FE8253a0e49E6548"}}},
      {"optimism", "Optimism", "l2", {{10, "0x4200000000000000000000000000000000000042"}}},
  };
  return kProjects;
}

struct DemoCampaign {
  const char* community;
  const char* name;
  PricingModel model;
  double bid;  // currency units
  std::vector<const char*> targets;
  std::vector<const char*> excludes;
  int recency_days;
  const char* headline;
  const char* content;
  const char* cta_label;
  const char* cta_url;
  // The creative images (app/demo_creatives.h): logo mark, brand colours, the short line.
  const char* mark;
  const char* color;
  const char* color2;
  const char* line;
  // Generated history (app/demo_traffic.h): mean impressions a day, CTR, conversions per click.
  double daily_impressions;
  double ctr;
  double conversions_per_click;
};

// One campaign per row group: who and how it bids, its audience, its ad, its creative, its history.
// clang-format off
const std::vector<DemoCampaign>& DemoCampaigns() {
  static const std::vector<DemoCampaign> kCampaigns = {
      {"Aave", "Aave: lend what you swap", PricingModel::kCpm, 9.0,
       {"uniswap", "curve", "1inch"}, {"aave"}, 90,
       "Put your idle tokens to work",
       "Supply assets on **Aave** and earn *variable* yield.\\n* No lockups\\n* Withdraw any time",
       "Open Aave", "https://app.aave.com",
       "A", "#b6509e", "#2ebac6", "Earn yield on idle tokens",
       9000, 0.012, 0.06},
      {"Lido", "Lido: stake your ETH", PricingModel::kCpm, 7.5,
       {"weth", "uniswap", "aave"}, {"lido"}, 120,
       "Liquid staking for ETH",
       "Stake ETH with **Lido**, keep it liquid as stETH.\\nUse it across __DeFi__.",
       "Stake now", "https://stake.lido.fi",
       "L", "#00a3ff", "#0a2540", "Stake ETH, stay liquid",
       7000, 0.009, 0.05},
      {"Uniswap", "Uniswap: swap on L2", PricingModel::kCpc, 0.40,
       {"usdc", "tether", "makerdao"}, {}, 60,
       "Swap with lower fees",
       "Trade tokens on **Uniswap** on Arbitrum, Optimism and Base.",
       "Swap", "https://app.uniswap.org",
       "U", "#ff007a", "#7a1cac", "Swap on L2 for less",
       6000, 0.021, 0.08},
      {"ENS", "ENS: your web3 name", PricingModel::kCpm, 5.0,
       {"opensea", "uniswap"}, {"ens"}, 180,
       "Claim your .eth name",
       "One name for all your wallets.\\n* Readable\\n* Portable\\n* *Yours*",
       "Find a name", "https://app.ens.domains",
       "E", "#5298ff", "#1b3a8c", "Claim your .eth name",
       4000, 0.015, 0.04},
      {"Chainlink", "Chainlink: build with oracles", PricingModel::kCpm, 4.0,
       {"aave", "compound", "chainlink"}, {}, 365,
       "Build on reliable data",
       "**Chainlink** data feeds power most of DeFi.",
       "Read the docs", "https://docs.chain.link",
       "C", "#375bd2", "#0b1a4a", "Build on reliable data",
       3000, 0.007, 0.03},
  };
  return kCampaigns;
}
// clang-format on

const char* const kFormatDirs[] = {"LANDSCAPE", "LONG_BANNER", "SHORT_BANNER"};

std::string CreativeUrl(const std::string& base_url, size_t campaign, int format) {
  return base_url + "/demo/creatives/c" + std::to_string(campaign) + "-" + kFormatDirs[format] +
         ".svg";
}

Result<DemoKeys> MintKeys(store::InventoryStore& store, store::Id publisher_id, int64_t now) {
  DemoKeys keys;
  for (bool test : {false, true}) {
    std::string key = "spk_" + RandomAlphanumeric(30);
    store::ApiKeyRecord record;
    record.publisher_id = publisher_id;
    record.hash = Sha256(key);
    record.prefix = key.substr(0, 8);
    record.test = test;
    ADS_ASSIGN_OR_RETURN(auto created, store.CreateApiKey(record, now));
    (void)created;
    (test ? keys.test_key : keys.live_key) = key;
  }
  return keys;
}

// Deterministic synthetic wallet number `i`.
Address SyntheticWallet(uint64_t seed, int i) {
  std::mt19937_64 rng(seed * 1'000'003 + static_cast<uint64_t>(i));
  Address a;
  for (size_t b = 0; b < a.bytes.size(); b += 8) {
    uint64_t v = rng();
    for (size_t k = 0; k < 8 && b + k < a.bytes.size(); ++k) a.bytes[b + k] = uint8_t(v >> (8 * k));
  }
  return a;
}

Status SeedActivity(store::ActivityStore& store,
                    const std::map<std::string, store::ProjectRecord>& projects, int64_t now,
                    int wallets, uint64_t seed) {
  std::vector<const store::ProjectRecord*> list;
  for (const auto& p : DemoProjects()) list.push_back(&projects.at(p.slug));
  std::mt19937_64 rng(seed);
  // Zipf-like popularity: project k has weight 1/(k+1).
  std::vector<double> weights;
  for (size_t k = 0; k < list.size(); ++k) weights.push_back(1.0 / double(k + 1));
  std::discrete_distribution<size_t> pick_project(weights.begin(), weights.end());
  std::uniform_int_distribution<int> n_projects(1, 5), age_days(0, 150), count(1, 40);
  std::vector<store::ActivityRecord> rows;
  for (int i = 0; i < wallets; ++i) {
    Address wallet = SyntheticWallet(seed, i);
    int n = n_projects(rng);
    std::vector<size_t> chosen;
    if (i == 0) chosen = {0, 1};  // the demo wallet: Uniswap and Aave, recently
    while (static_cast<int>(chosen.size()) < n) {
      size_t k = pick_project(rng);
      if (std::find(chosen.begin(), chosen.end(), k) == chosen.end()) chosen.push_back(k);
    }
    for (size_t k : chosen) {
      const store::ProjectRecord& p = *list[k];
      store::ActivityRecord row;
      row.wallet = wallet;
      row.project_id = p.id;
      row.chain_id = p.contracts.front().chain_id;
      row.last_seen = now - int64_t(i == 0 ? 1 : age_days(rng)) * 86400;
      row.count = count(rng);
      rows.push_back(row);
    }
  }
  return store.RecordActivity(rows);
}

Result<std::map<std::string, store::ProjectRecord>> SeedProjects(store::InventoryStore& store,
                                                                 int64_t now) {
  std::map<std::string, store::ProjectRecord> out;
  for (const DemoProject& p : DemoProjects()) {
    store::ProjectRecord record;
    record.slug = p.slug;
    record.name = p.name;
    record.category = p.category;
    for (const DemoContract& c : p.contracts) {
      record.contracts.push_back({c.chain_id, *ParseAddress(c.address)});
    }
    ADS_ASSIGN_OR_RETURN(out[p.slug], store.CreateProject(record, now));
  }
  return out;
}

// Merges the real project lists installed by scripts/install-deps.sh (tools/registry/out) into
// the registry; without them the demo keeps its built-in projects only.
Status SeedRegistryLists(store::InventoryStore& store, int64_t now) {
  std::error_code ec;
  std::filesystem::path dir(ADSERVER_REGISTRY_DIR);
  if (!std::filesystem::is_directory(dir, ec)) return OkStatus();
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  // In the order of their names (tools/registry/export.js numbers them): protocol address books
  // first, so a protocol claims its contracts before token lists do, then curated token lists.
  std::sort(files.begin(), files.end());
  size_t added = 0, merged = 0;
  // Named entries of every list, then the ones without a name (ingest::ImportEntries).
  for (ingest::ImportEntries pass :
       {ingest::ImportEntries::kNamed, ingest::ImportEntries::kUnnamed}) {
    for (const auto& file : files) {
      std::ifstream in(file, std::ios::binary);
      std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      // The demo history's rollups may hold the database's write lock past the busy timeout:
      // the import is idempotent, so a list that met the lock is imported again.
      Result<ingest::RegistryImportSummary> summary =
          ingest::ImportProjectList(json, store, now, pass);
      for (int attempt = 1; attempt < 5 && summary.status().code() == Code::kUnavailable;
           ++attempt) {
        ADS_LOG(info, "demo project list retried", "file", file.string(), "status",
                summary.status());
        std::this_thread::sleep_for(std::chrono::seconds(1));
        summary = ingest::ImportProjectList(json, store, now, pass);
      }
      if (!summary.ok()) {
        ADS_LOG(warn, "demo project list skipped", "file", file.string(), "status",
                summary.status());
        continue;
      }
      added += summary->added;
      merged += summary->merged;
    }
  }
  ADS_LOG(info, "demo registry lists imported", "files", files.size(), "added", added, "merged",
          merged);
  return OkStatus();
}

// Creates the demo's communities, campaigns and ads; returns them for the generated history.
Result<std::vector<DemoTrafficCampaign>> SeedCampaigns(
    store::InventoryStore& store, const std::map<std::string, store::ProjectRecord>& projects,
    const std::string& base_url, int64_t now) {
  std::vector<DemoTrafficCampaign> seeded;
  std::map<std::string, store::Id> communities;
  for (size_t i = 0; i < DemoCampaigns().size(); ++i) {
    const DemoCampaign& d = DemoCampaigns()[i];
    if (!communities.count(d.community)) {
      store::CommunityRecord c;
      c.name = d.community;
      c.logo_url = base_url + "/demo/creatives/logo-" + std::to_string(i) + ".svg";
      ADS_ASSIGN_OR_RETURN(auto created, store.CreateCommunity(c, now));
      communities[d.community] = created.id;
    }
    store::CampaignRecord c;
    c.community_id = communities[d.community];
    c.name = d.name;
    c.status = CampaignStatus::kActive;
    c.pricing_model = d.model;
    c.bid_micros = static_cast<Micros>(std::llround(d.bid * kMicrosPerUnit));
    c.daily_budget_micros = 500 * kMicrosPerUnit;
    for (const char* slug : d.targets) c.target_projects.push_back(projects.at(slug).id);
    for (const char* slug : d.excludes) c.exclude_projects.push_back(projects.at(slug).id);
    c.recency_days = d.recency_days;
    c.frequency_cap = store::FrequencyCap{5, 24};
    ADS_ASSIGN_OR_RETURN(auto campaign, store.CreateCampaign(c, now));
    store::AdRecord ad;
    ad.campaign_id = campaign.id;
    ad.headline = d.headline;
    ad.content = d.content;
    ad.cta_url = d.cta_url;
    ad.cta_label = d.cta_label;
    for (int f = 0; f < kImageFormatsWithImage; ++f) ad.images[f] = CreativeUrl(base_url, i, f);
    ADS_ASSIGN_OR_RETURN(auto created_ad, store.CreateAd(ad, now));
    seeded.push_back(DemoTrafficCampaign{.campaign_id = campaign.id,
                                         .ad_id = created_ad.id,
                                         .model = campaign.pricing_model,
                                         .bid_micros = campaign.bid_micros,
                                         .daily_impressions = d.daily_impressions,
                                         .ctr = d.ctr,
                                         .conversions_per_click = d.conversions_per_click});
  }
  return seeded;
}

CreativeBrand BrandOf(const DemoCampaign& d) {
  return CreativeBrand{.name = d.community,
                       .mark = d.mark,
                       .color = d.color,
                       .color2 = d.color2,
                       .line = d.line,
                       .cta = d.cta_label};
}

// The origin (scheme://host[:port]) of `base_url`, lower-cased, when it is a valid one.
std::optional<std::string> DemoOrigin(std::string_view base_url) {
  size_t scheme = base_url.find("://");
  if (scheme == std::string_view::npos) return std::nullopt;
  std::string origin(base_url.substr(0, base_url.find('/', scheme + 3)));
  std::transform(origin.begin(), origin.end(), origin.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ingest::ValidateOrigin("origin", origin).ok()) return origin;
  return std::nullopt;
}

}  // namespace

Result<DemoKeys> SeedDemo(store::InventoryStore& store, store::ActivityStore& activity,
                          store::EventsStore& events, const Clock& clock,
                          const std::string& base_url, int wallets, uint64_t seed) {
  const int64_t now = clock.NowSeconds();
  DemoKeys keys;
  ADS_ASSIGN_OR_RETURN(auto publishers, store.ListPublishers());
  auto existing = std::find_if(publishers.begin(), publishers.end(),
                               [](const auto& p) { return p.name == kDemoPublisher; });
  if (existing != publishers.end()) {
    ADS_ASSIGN_OR_RETURN(keys, MintKeys(store, existing->id, now));
  } else {
    store::PublisherRecord publisher;
    publisher.name = kDemoPublisher;
    // The demo's pages are the server's own origin (issue 39: browsers from unlisted origins
    // are served without the identity cookie); operators add their sites with PATCH.
    if (std::optional<std::string> origin = DemoOrigin(base_url)) {
      publisher.allowed_origins.push_back(*origin);
    }
    ADS_ASSIGN_OR_RETURN(publisher, store.CreatePublisher(publisher, now));
    ADS_ASSIGN_OR_RETURN(auto projects, SeedProjects(store, now));
    ADS_ASSIGN_OR_RETURN(auto campaigns, SeedCampaigns(store, projects, base_url, now));
    ADS_RETURN_IF_ERROR(SeedActivity(activity, projects, now, wallets, seed));
    // History only with a new dataset: a restart on it finds the publisher and writes none.
    DemoTraffic traffic =
        GenerateDemoTraffic(campaigns, publisher.id, now, DemoTrafficOptions{.seed = seed});
    ADS_RETURN_IF_ERROR(WriteDemoTraffic(events, traffic, now));
    ADS_ASSIGN_OR_RETURN(keys, MintKeys(store, publisher.id, now));
    keys.registry_pending = true;
  }
  keys.wallet = FormatAddress(SyntheticWallet(seed, 0));
  return keys;
}

Status SeedDemoRegistry(store::InventoryStore& store, const Clock& clock) {
  return SeedRegistryLists(store, clock.NowSeconds());
}

namespace {

// "logo-{i}.svg" (format < 0) or "c{i}-{FORMAT}.svg". Appended piecewise: GCC 12 at -O3 warns
// (-Wrestrict, a false positive) on "c" + std::to_string(i).
std::string CreativeName(size_t campaign, int format) {
  std::string name(format < 0 ? "logo-" : "c");
  name += std::to_string(campaign);
  if (format >= 0) name.append("-").append(kFormatDirs[format]);
  return name.append(".svg");
}

}  // namespace

std::vector<std::string> DemoCreativeNames() {
  std::vector<std::string> names;
  for (size_t i = 0; i < DemoCampaigns().size(); ++i) {
    for (int f = -1; f < kImageFormatsWithImage; ++f) names.push_back(CreativeName(i, f));
  }
  return names;
}

std::optional<std::string> DemoCreativeSvg(std::string_view name) {
  constexpr CreativeKind kKinds[] = {CreativeKind::kLogo, CreativeKind::kLandscape,
                                     CreativeKind::kLongBanner, CreativeKind::kShortBanner};
  for (size_t i = 0; i < DemoCampaigns().size(); ++i) {
    for (int f = -1; f < kImageFormatsWithImage; ++f) {
      if (name == CreativeName(i, f)) {
        return RenderCreativeSvg(BrandOf(DemoCampaigns()[i]), kKinds[f + 1]);
      }
    }
  }
  return std::nullopt;
}

void RegisterDemoCreatives(http::Router& router) {
  router.Add(http::Method::kGet, "/demo/creatives/{name}", [](const http::Request& request) {
    std::optional<std::string> svg = DemoCreativeSvg(request.Param("name"));
    if (!svg) return http::ErrorResponse(404, "no such demo creative");
    http::Response r;
    r.SetHeader("Content-Type", "image/svg+xml");
    r.SetHeader("Cache-Control", "public, max-age=3600");
    r.body = std::move(*svg);
    return r;
  });
}

Result<std::string> SeedDemoOperator(store::AccountStore& accounts, const Clock& clock,
                                     const PasswordHashOptions& hashing) {
  // 20 characters of an unambiguous alphabet: ~114 bits.
  static constexpr char kAlphabet[] = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
  std::string password;
  for (int i = 0; i < 20; ++i) {
    password += kAlphabet[randombytes_uniform(sizeof kAlphabet - 1)];
  }
  ADS_ASSIGN_OR_RETURN(std::string hash, HashPassword(password, hashing));
  Result<store::UserRecord> existing = accounts.GetUserByEmail(kDemoOperatorEmail);
  if (existing.ok()) {
    existing->password_hash = hash;
    ADS_RETURN_IF_ERROR(accounts.UpdateUser(*existing, clock.NowSeconds()).status());
    return password;
  }
  if (existing.status().code() != Code::kNotFound) return existing.status();
  store::UserRecord user{
      .email = kDemoOperatorEmail, .password_hash = hash, .role = store::Role::kOperator};
  ADS_RETURN_IF_ERROR(accounts.CreateUser(user, clock.NowSeconds()).status());
  return password;
}

void PrintDemoBanner(std::ostream& out, const DemoKeys& keys, const std::string& base_url,
                     const std::string& operator_password) {
  out << "\nadserver demo is ready at " << base_url << "\n"
      << "  live key: " << keys.live_key << "\n"
      << "  test key: " << keys.test_key << "\n"
      << "  (keys are stored hashed; these are shown once. Restarting with --demo mints new "
         "ones.)\n\n"
      << "Current variant:\n"
      << "  curl -i -X POST " << base_url << "/v1/ads -H 'Content-Type: application/json' \\\n"
      << "    -H 'x-api-key: " << keys.live_key << "' \\\n"
      << "    -d '{\"walletAddresses\":[\"" << keys.wallet
      << "\"],\"imageFormat\":\"LANDSCAPE\",\"adUnitId\":\"demo-slot\"}'\n\n"
      << "Earlier variant:\n"
      << "  curl -i -X POST " << base_url << "/api/ads -H 'Content-Type: application/json' \\\n"
      << "    -H 'x-api-key: " << keys.live_key << "' \\\n"
      << "    -d '{\"walletAddresses\":[\"" << keys.wallet
      << "\"],\"imageFormat\":\"SHORT_BANNER\"}'\n";
  if (!operator_password.empty()) {
    out << "\nConsole: " << base_url << "/console/\n"
        << "  Email:    " << kDemoOperatorEmail << "\n"
        << "  Password: " << operator_password << "\n"
        << "  (a new password on every --demo start)\n";
  }
  if (keys.registry_pending) {
    out << "\nImporting the project registry (about 20,000 projects, ~10 s) for the console's "
           "project search; ads are served meanwhile.\n";
  }
  out << std::endl;
}

}  // namespace adserver::demo
