#include "decision/engine.h"

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "common/clock.h"

namespace adserver::decision {

namespace {

// A vector keeping its first N elements inline, so the common request allocates nothing.
template <typename T, size_t N>
class SmallVector {
 public:
  void push_back(const T& value) {
    if (size_ < N) {
      inline_[size_++] = value;
      return;
    }
    if (size_ == N) heap_.assign(inline_.begin(), inline_.end());
    heap_.push_back(value);
    ++size_;
  }
  void clear() {
    size_ = 0;
    heap_.clear();
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return size_ <= N ? inline_.data() : heap_.data(); }
  T* end() { return begin() + size_; }
  const T* begin() const { return size_ <= N ? inline_.data() : heap_.data(); }
  const T* end() const { return begin() + size_; }
  T& operator[](size_t i) { return begin()[i]; }
  const T& operator[](size_t i) const { return begin()[i]; }

 private:
  std::array<T, N> inline_{};
  std::vector<T> heap_;
  size_t size_ = 0;
};

// Requests carry at most 50 wallets (spec 8); more spill to the heap.
using WalletInteractions = SmallVector<std::span<const Interaction>, 64>;

// Everything a request needs while scoring campaigns, computed once.
struct Context {
  const DecisionRequest& request;
  const Catalog& catalog;
  WalletInteractions wallets;  // interactions of each request wallet, in request order
  int64_t today = 0;
  size_t format = 0;
  bool earlier = false;
};

const std::vector<Index>& AdList(const Campaign& c, const Context& ctx) {
  return ctx.earlier ? c.ads_earlier[ctx.format] : c.ads_current[ctx.format];
}

uint64_t AdWeightSum(const Campaign& c, const Context& ctx) {
  return ctx.earlier ? c.weight_earlier[ctx.format] : c.weight_current[ctx.format];
}

bool InSchedule(const Campaign& c, int64_t now) {
  if (c.starts_at && now < *c.starts_at) return false;
  if (c.ends_at && now >= *c.ends_at) return false;
  return true;
}

// True when `i` counts for `c`: an allowed chain and within the recency window.
bool InteractionMatches(const Campaign& c, const Interaction& i, int64_t today) {
  if (!c.chains.empty() && !std::binary_search(c.chains.begin(), c.chains.end(), i.chain_id)) {
    return false;
  }
  return !c.recency_days || today - static_cast<int64_t>(i.last_seen_day) <= *c.recency_days;
}

// The interactions of one wallet with `project_id` (the span is sorted by project id).
std::span<const Interaction> WithProject(std::span<const Interaction> all, uint32_t project_id) {
  auto by_project = [](const Interaction& i, uint32_t p) { return i.project_id < p; };
  auto first = std::lower_bound(all.begin(), all.end(), project_id, by_project);
  auto last = first;
  while (last != all.end() && last->project_id == project_id) ++last;
  return {first, last};
}

// Any interaction of any request wallet with an excluded project, on any chain, at any time.
bool AnyWalletExcluded(const Campaign& c, const Context& ctx) {
  for (uint32_t project : c.exclude_projects) {
    for (std::span<const Interaction> interactions : ctx.wallets) {
      if (!WithProject(interactions, project).empty()) return true;
    }
  }
  return false;
}

// The campaign-level conditions (everything but the wallet match).
bool CampaignEligible(const Campaign& c, const Context& ctx) {
  return InSchedule(c, ctx.request.now_seconds) &&
         !ctx.request.publisher->BlocksCommunity(c.community_id) && !AdList(c, ctx).empty() &&
         !AnyWalletExcluded(c, ctx);
}

// The highest-valued eligible campaigns seen so far. Lower-valued offers are dropped on one
// comparison and ties already accepted are recognised in the (small) tie list, so no
// per-request set of all candidates is needed to deduplicate campaigns reached through
// several wallets, projects or chains.
class Auction {
 public:
  explicit Auction(const Context& ctx) : ctx_(ctx) {}

  // The lowest value that can still win (or tie); lower-valued offers are pointless.
  double floor() const { return best_value_; }

  // `run`: one wallet's interactions with one project that campaign `c` (worth `value`)
  // targets.
  void Offer(Index c, double value, std::span<const Interaction> run) {
    if (value < best_value_) return;
    if (value == best_value_ && std::find(ties_.begin(), ties_.end(), c) != ties_.end()) return;
    const Campaign& campaign = ctx_.catalog.campaigns[c];
    bool matches = std::any_of(run.begin(), run.end(), [&](const Interaction& i) {
      return InteractionMatches(campaign, i, ctx_.today);
    });
    if (!matches || !CampaignEligible(campaign, ctx_)) return;
    if (value > best_value_) {
      ties_.clear();
      best_value_ = value;
    }
    ties_.push_back(c);
  }

  SmallVector<Index, 16>& ties() { return ties_; }

 private:
  const Context& ctx_;
  double best_value_ = -std::numeric_limits<double>::infinity();
  SmallVector<Index, 16> ties_;
};

// Index in [0, n) drawn with probability weight(i) / total; uniform when every weight is 0.
template <typename WeightFn>
size_t PickWeighted(size_t n, WeightFn weight, Rng& rng) {
  if (n == 1) return 0;
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) total += weight(i);
  if (total == 0) return std::uniform_int_distribution<size_t>(0, n - 1)(rng);
  uint64_t r = std::uniform_int_distribution<uint64_t>(0, total - 1)(rng);
  for (size_t i = 0; i < n; ++i) {
    uint64_t w = weight(i);
    if (r < w) return i;
    r -= w;
  }
  return n - 1;
}

// The request wallet with the most recent matching interaction, then the larger count, then
// the earliest in the request.
uint32_t MatchedWallet(const Campaign& c, const Context& ctx) {
  uint32_t best = 0;
  bool found = false;
  uint32_t best_day = 0;
  uint32_t best_count = 0;
  for (uint32_t w = 0; w < ctx.wallets.size(); ++w) {
    for (uint32_t project : c.target_projects) {
      for (const Interaction& i : WithProject(ctx.wallets[w], project)) {
        if (!InteractionMatches(c, i, ctx.today)) continue;
        bool better = !found || i.last_seen_day > best_day ||
                      (i.last_seen_day == best_day && i.count > best_count);
        if (!better) continue;
        found = true;
        best = w;
        best_day = i.last_seen_day;
        best_count = i.count;
      }
    }
  }
  return best;
}

const Community* CommunityOf(const Campaign& c, const Catalog& catalog) {
  return c.community < catalog.communities.size() ? &catalog.communities[c.community] : nullptr;
}

// Walks each wallet's interactions project by project into the campaigns targeting them.
// Those lists are sorted by value, so each stops at the first campaign worth less than the
// best eligible one found so far.
void CollectCandidates(const Context& ctx, Auction& auction) {
  for (std::span<const Interaction> interactions : ctx.wallets) {
    size_t begin = 0;
    while (begin < interactions.size()) {
      uint32_t project = interactions[begin].project_id;
      size_t end = begin + 1;
      while (end < interactions.size() && interactions[end].project_id == project) ++end;
      std::span<const Interaction> run = interactions.subspan(begin, end - begin);
      begin = end;
      const Catalog::ProjectCampaigns* targeting = ctx.catalog.FindProjectCampaigns(project);
      if (targeting == nullptr) continue;
      for (size_t k = 0; k < targeting->campaigns.size(); ++k) {
        if (targeting->values[k] < auction.floor()) break;
        auction.Offer(targeting->campaigns[k], targeting->values[k], run);
      }
    }
  }
}

}  // namespace

std::optional<Decision> Decide(const DecisionRequest& request, const Catalog& catalog,
                               const ActivityIndex& activity, Rng& rng) {
  Context ctx{.request = request,
              .catalog = catalog,
              .wallets = {},
              .today = DayOf(request.now_seconds),
              .format = static_cast<size_t>(request.format),
              .earlier = request.variant == Variant::kEarlier};
  for (const Address& wallet : request.wallets) ctx.wallets.push_back(activity.Lookup(wallet));

  Auction auction(ctx);
  CollectCandidates(ctx, auction);
  SmallVector<Index, 16>& ties = auction.ties();
  if (ties.empty()) return std::nullopt;

  // Sorted so the draw does not depend on the order wallets and projects were visited.
  std::sort(ties.begin(), ties.end());
  size_t winner_pos = PickWeighted(
      ties.size(), [&](size_t i) { return AdWeightSum(catalog.campaigns[ties[i]], ctx); }, rng);
  const Campaign& winner = catalog.campaigns[ties[winner_pos]];

  const std::vector<Index>& ads = AdList(winner, ctx);
  size_t ad_pos = PickWeighted(
      ads.size(), [&](size_t i) -> uint64_t { return catalog.ads[ads[i]].weight; }, rng);

  return Decision{.campaign = &winner,
                  .ad = &catalog.ads[ads[ad_pos]],
                  .community = CommunityOf(winner, catalog),
                  .matched_wallet = MatchedWallet(winner, ctx)};
}

std::optional<Decision> SampleDecision(const DecisionRequest& request, const Catalog& catalog,
                                       uint64_t counter) {
  const std::vector<Index>& samples =
      catalog.SampleAds(request.format, request.variant == Variant::kEarlier);
  size_t n = samples.size();
  for (size_t k = 0; k < n; ++k) {
    const Ad& ad = catalog.ads[samples[(counter % n + k) % n]];
    const Campaign& campaign = catalog.campaigns[ad.campaign];
    if (request.publisher->BlocksCommunity(campaign.community_id)) continue;
    return Decision{.campaign = &campaign,
                    .ad = &ad,
                    .community = CommunityOf(campaign, catalog),
                    .matched_wallet = 0};
  }
  return std::nullopt;
}

}  // namespace adserver::decision
