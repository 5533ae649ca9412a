#include "decision/engine.h"

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "common/clock.h"
#include "decision/rate_model.h"
#include "decision/walk_order.h"

namespace adserver::decision {

namespace {

// A vector keeping its first N elements inline, so the common request allocates nothing. The
// inline storage is left uninitialized (it is large and built per request), hence trivially
// copyable element types only.
template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  SmallVector() {}  // NOLINT: leaves inline_ uninitialized on purpose
  SmallVector(const SmallVector&) = delete;
  SmallVector& operator=(const SmallVector&) = delete;

  void push_back(const T& value) {
    if (size_ < N) {
      new (&inline_[size_++]) T(value);
      return;
    }
    if (size_ == N) heap_.assign(inline_, inline_ + N);
    heap_.push_back(value);
    ++size_;
  }
  void clear() {
    size_ = 0;
    heap_.clear();
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return size_ <= N ? inline_ : heap_.data(); }
  T* end() { return begin() + size_; }
  const T* begin() const { return size_ <= N ? inline_ : heap_.data(); }
  const T* end() const { return begin() + size_; }
  T& operator[](size_t i) { return begin()[i]; }
  const T& operator[](size_t i) const { return begin()[i]; }

 private:
  union {
    T inline_[N];
  };
  std::vector<T> heap_;
  size_t size_ = 0;
};

// Requests carry at most 50 wallets (spec 8); more spill to the heap.
using WalletInteractions = SmallVector<std::span<const Interaction>, 64>;

const DecisionOptions& DefaultOptions() {
  static const DecisionOptions options;
  return options;
}

// The request's interactions grouped by project, built once per request so the person
// rules cost one array probe per project whatever the number of wallets: for each project a
// chain of (wallet, interaction) in request-wallet order, and the projects in first-seen
// order (wallet by wallet, project ids ascending within a wallet). Per-thread and reused, so
// it allocates nothing in the steady state. Projects at or above the catalog's
// project_id_limit are left out: no campaign rule names them.
class PersonProjects {
 public:
  static constexpr uint32_t kEnd = std::numeric_limits<uint32_t>::max();
  struct Node {
    const Interaction* interaction;
    uint32_t wallet;
    uint32_t next;
  };

  void Build(const WalletInteractions& wallets, uint32_t project_limit) {
    if (slots_.size() < project_limit) {
      slots_.assign(project_limit, Slot{});
      epoch_ = 0;
    }
    if (++epoch_ == 0) {
      std::fill(slots_.begin(), slots_.end(), Slot{});
      epoch_ = 1;
    }
    limit_ = project_limit;
    nodes_.clear();
    projects_.clear();
    for (uint32_t w = 0; w < wallets.size(); ++w) {
      for (const Interaction& i : wallets[w]) Add(w, i);
    }
  }
  bool Used(uint32_t project) const { return project < limit_ && slots_[project].stamp == epoch_; }
  // First node of `project`'s chain, or kEnd.
  uint32_t First(uint32_t project) const { return Used(project) ? slots_[project].head : kEnd; }
  const Node& node(uint32_t n) const { return nodes_[n]; }
  // The most recent last-seen day of any wallet's interaction with `project` (any chain).
  // REQUIRES: Used(project).
  uint32_t NewestDay(uint32_t project) const { return slots_[project].newest; }
  const std::vector<uint32_t>& projects() const { return projects_; }

 private:
  // One project's state, together so that adding an interaction touches one cache line.
  struct Slot {
    uint32_t stamp = 0;  // == epoch_ when the project is used in this request
    uint32_t head = 0;
    uint32_t tail = 0;
    uint32_t newest = 0;
  };

  void Add(uint32_t wallet, const Interaction& i) {
    uint32_t p = i.project_id;
    if (p >= limit_) return;
    auto n = static_cast<uint32_t>(nodes_.size());
    Slot& slot = slots_[p];
    if (slot.stamp != epoch_) {
      slot = {.stamp = epoch_, .head = n, .tail = n, .newest = i.last_seen_day};
      projects_.push_back(p);
    } else {
      nodes_[slot.tail].next = n;
      slot.tail = n;
      slot.newest = std::max(slot.newest, i.last_seen_day);
    }
    nodes_.push_back({&i, wallet, kEnd});
  }

  std::vector<Slot> slots_;  // by project id
  uint32_t epoch_ = 0;
  uint32_t limit_ = 0;
  std::vector<Node> nodes_;
  std::vector<uint32_t> projects_;
};

PersonProjects& ThreadPersonProjects() {
  thread_local PersonProjects person;
  return person;
}

// Everything a request needs while scoring campaigns, computed once.
struct Context {
  const DecisionRequest& request;
  const Catalog& catalog;
  const DecisionOptions& options;
  // The interactions of the request wallets by project (set before the auction).
  const PersonProjects* person = nullptr;
  int64_t today = 0;
  size_t format = 0;
  bool earlier = false;
  std::string_view arm;
  // Exploration (DecisionOptions::explore, with live state): a CPC/CPA campaign is valued at
  // its current draw (LiveState::LoadLift), redrawn every recompute.
  bool explore = false;
  // The live walk order built for this catalog (null: none; walk in catalog order) and its
  // per-placement factors (null: none).
  const WalkOrder* order = nullptr;
  const PlacementFactors* placements = nullptr;
  // AdUnitKey of the request's adUnitId (0: none sent), set with `placements`.
  uint64_t unit = 0;
};

const std::vector<Index>& AdList(const Campaign& c, const Context& ctx) {
  return ctx.earlier ? c.ads_earlier[ctx.format] : c.ads_current[ctx.format];
}

bool AdInArm(const Ad& ad, const Context& ctx) { return ad.ab_arm.empty() || ad.ab_arm == ctx.arm; }

// Weight of the campaign's ads usable in this request (format, variant, arm).
uint64_t AdWeightSum(const Campaign& c, const Context& ctx) {
  if (!c.has_arm_ads) {
    // Hot path: every listed ad is usable; the sum was computed when the catalog was built.
    if (AdList(c, ctx).empty()) return 0;
    uint64_t total = ctx.earlier ? c.weight_earlier[ctx.format] : c.weight_current[ctx.format];
    return std::max<uint64_t>(total, 1);
  }
  uint64_t sum = 0;
  bool any = false;
  for (Index a : AdList(c, ctx)) {
    const Ad& ad = ctx.catalog.ads[a];
    if (!AdInArm(ad, ctx)) continue;
    any = true;
    sum += ad.weight;
  }
  return any ? std::max<uint64_t>(sum, 1) : 0;
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

bool AnyWalletUsed(uint32_t project, const Context& ctx) { return ctx.person->Used(project); }

template <typename T>
bool SortedContains(const std::vector<T>& v, const T& x) {
  return std::binary_search(v.begin(), v.end(), x);
}

// The rules that depend on the campaign and the placement only.
DropRule PlacementRule(const Campaign& c, const Context& ctx) {
  const Publisher& p = *ctx.request.publisher;
  if (!InSchedule(c, ctx.request.now_seconds)) return DropRule::kSchedule;
  if (!c.allowed_publishers.empty() && !SortedContains(c.allowed_publishers, p.id)) {
    return DropRule::kPublisherNotAllowed;
  }
  if (p.BlocksCommunity(c.community_id)) return DropRule::kCommunityBlocked;
  if (!p.allowed_communities.empty() && !SortedContains(p.allowed_communities, c.community_id)) {
    return DropRule::kCommunityNotAllowed;
  }
  if (!c.category.empty() && !SortedContains(p.category_opt_ins, c.category)) {
    return DropRule::kCategoryNotOptedIn;
  }
  if (AdWeightSum(c, ctx) == 0) return DropRule::kNoAdForFormat;
  return DropRule::kNone;
}

// How the person's wallets matched one campaign.
struct Match {
  bool matched = false;
  uint32_t wallet = 0;  // strongest: most recent, then larger count, then request order
  uint32_t best_day = 0;
  uint32_t best_count = 0;
  uint32_t projects = 0;  // distinct targeted projects matched
  // False when only `matched` is known (MatchAny): the other fields are not filled.
  bool complete = true;
};

// Every matching interaction of every wallet with every targeted project. Fills `m` field by
// field (see Evaluate).
void MatchAll(const Campaign& c, const Context& ctx, Match& m) {
  m.matched = false;
  m.wallet = 0;
  m.best_day = 0;
  m.best_count = 0;
  m.complete = true;
  SmallVector<uint32_t, 16> projects;
  const PersonProjects& person = *ctx.person;
  for (uint32_t project : c.target_projects) {
    for (uint32_t n = person.First(project); n != PersonProjects::kEnd;
         n = person.node(n).next) {
      const Interaction& i = *person.node(n).interaction;
      uint32_t wallet = person.node(n).wallet;
      if (!InteractionMatches(c, i, ctx.today)) continue;
      if (std::find(projects.begin(), projects.end(), project) == projects.end()) {
        projects.push_back(project);
      }
      bool better = !m.matched || i.last_seen_day > m.best_day ||
                    (i.last_seen_day == m.best_day && i.count > m.best_count) ||
                    (i.last_seen_day == m.best_day && i.count == m.best_count && wallet < m.wallet);
      if (!better) continue;
      m.matched = true;
      m.wallet = wallet;
      m.best_day = i.last_seen_day;
      m.best_count = i.count;
    }
  }
  m.projects = static_cast<uint32_t>(projects.size());
}

Match MatchAll(const Campaign& c, const Context& ctx) {
  Match m;
  MatchAll(c, ctx, m);
  return m;
}

// The largest relevance multiplier a campaign can reach (all targeted projects, today).
double MaxRelevance(const Campaign& c, const Context& ctx) {
  const DecisionOptions& o = ctx.options;
  return 1 + std::max(0.0, o.recency_weight) +
         std::max(0.0, o.projects_weight) *
             (static_cast<double>(std::max<size_t>(c.target_projects.size(), 1)) - 1);
}

double Relevance(const Campaign& c, const Match& m, const Context& ctx) {
  const DecisionOptions& o = ctx.options;
  if (o.recency_weight == 0 && o.projects_weight == 0) return 1;
  double window = c.recency_days ? *c.recency_days : 30;
  double age = static_cast<double>(ctx.today - static_cast<int64_t>(m.best_day));
  double recency = std::clamp(1 - age / std::max(window, 1.0), 0.0, 1.0);
  return 1 + o.recency_weight * recency + o.projects_weight * (static_cast<double>(m.projects) - 1);
}

bool Exhausted(Micros spent, Micros budget, Micros price) {
  return price > 0 ? spent + price > budget : spent >= budget;
}

DropRule BudgetRule(const Campaign& c, const BudgetLedger::View& v, const LiveState& live) {
  if (!v.tracked && (c.total_budget_micros || c.daily_budget_micros)) {
    return DropRule::kBudgetUntracked;
  }
  Micros price = ImpressionPrice(c);
  if (c.total_budget_micros && live.leases != nullptr &&
      live.leases->Held(c.id) < LeaseNeed(c)) {
    return DropRule::kBudgetNotLeased;
  }
  if (c.total_budget_micros && Exhausted(v.total_spend, *c.total_budget_micros, price)) {
    return DropRule::kTotalBudgetExhausted;
  }
  if (c.daily_budget_micros && Exhausted(v.day_spend, *c.daily_budget_micros, price)) {
    return DropRule::kDailyBudgetExhausted;
  }
  return DropRule::kNone;
}

double PacingOf(const Campaign& c, const BudgetLedger::View& v, const Context& ctx) {
  PacingInput in{.mode = c.pacing,
                 .now = ctx.request.now_seconds,
                 .daily_budget = c.daily_budget_micros ? &*c.daily_budget_micros : nullptr,
                 .day_spend = v.day_spend,
                 .hour_spend = v.hour_spend,
                 .total_budget = c.total_budget_micros ? &*c.total_budget_micros : nullptr,
                 .total_spend = v.total_spend,
                 .starts_at = c.starts_at ? &*c.starts_at : nullptr,
                 .ends_at = c.ends_at ? &*c.ends_at : nullptr};
  return PacingFactor(in, ctx.options);
}

// The value of one impression of `c` (before relevance) into `e`: the greedy posterior mean,
// or with exploration the campaign's current draw from its posterior (its lift ceiling, which
// is that draw: the bounds of the walk are then exact). False when it cannot reach `cutoff` at
// the largest relevance.
bool ValueOf(const Campaign& c, const BudgetLedger::View& counters, const Context& ctx,
             double cutoff, CandidateExplanation& e) {
  const bool learned = c.pricing_model != PricingModel::kCpm && c.bid_micros > 0;
  // A campaign that opted out of exploration (Campaign::explore) is valued greedily.
  double drawn = ctx.explore && learned && c.explore ? ctx.request.live->LoadLift(c.id) : 0;
  if (learned && ctx.request.explain != nullptr) {
    // The posterior the value comes from: exploring, of the effective counts of the last draw.
    const std::optional<RateCounts> effective =
        drawn > 0 ? ctx.request.live->rates.Published(c.id) : std::nullopt;
    e.rate = CurrentPosterior(c, effective, counters, ctx.options);
  }
  if (drawn > 0) {
    e.sampled = true;
    // With per-placement factors the ceiling is the draw on the campaign's best placement.
    if (ctx.placements != nullptr) {
      e.placement_factor = ctx.placements->Factor(c.id, ctx.request.publisher->id, ctx.unit);
      drawn *= e.placement_factor / ctx.placements->Ceiling(c.id);
    }
    e.value_micros = c.value_micros * drawn;
    e.mean_value_micros = static_cast<double>(c.bid_micros) * e.rate.mean;  // explain only
  } else {
    // Greedy, CPM, or a campaign not drawn yet (new in this catalog until the next recompute,
    // or an id beyond LiveStateOptions::lift_capacity): its posterior mean.
    e.value_micros = ExpectedValue(c, counters, ctx.options);
    e.mean_value_micros = e.value_micros;
  }
  return !(e.value_micros * MaxRelevance(c, ctx) * e.pacing_factor < cutoff);
}

// The full verdict on one campaign.
struct Verdict {
  CandidateExplanation e;
  Match match;
};

// The rules about the person: activity match and exclusions. Fills `match`.
// Whether any interaction of any wallet matches: stops at the first one. Enough to rank a
// campaign when relevance is neutral; the winner's full match is computed afterwards.
bool MatchAny(const Campaign& c, const Context& ctx) {
  const PersonProjects& person = *ctx.person;
  for (uint32_t project : c.target_projects) {
    for (uint32_t n = person.First(project); n != PersonProjects::kEnd;
         n = person.node(n).next) {
      if (InteractionMatches(c, *person.node(n).interaction, ctx.today)) return true;
    }
  }
  return false;
}

// True when the score needs the full match (relevance) or an explanation is asked for.
bool NeedsFullMatch(const Context& ctx) {
  return ctx.request.explain != nullptr || ctx.options.recency_weight != 0 ||
         ctx.options.projects_weight != 0;
}

DropRule PersonRule(const Campaign& c, const Context& ctx, Match& match) {
  if (NeedsFullMatch(ctx)) {
    MatchAll(c, ctx, match);
  } else {
    match.matched = MatchAny(c, ctx);
    match.complete = false;
  }
  if (!match.matched) return DropRule::kNoMatchingActivity;
  for (uint32_t project : c.exclude_projects) {
    if (AnyWalletUsed(project, ctx)) return DropRule::kExcludedProject;
  }
  if (c.exclude_existing_users && c.advertiser_project &&
      AnyWalletUsed(*c.advertiser_project, ctx)) {
    return DropRule::kExistingUser;
  }
  return DropRule::kNone;
}

bool FrequencyCapped(const Campaign& c, const Context& ctx) {
  const DecisionRequest& r = ctx.request;
  return r.live != nullptr && c.frequency_cap_count > 0 &&
         r.live->caps.MaxCount(r.wallets, c.id, c.frequency_cap_hours, r.now_seconds) >=
             static_cast<uint32_t>(c.frequency_cap_count);
}

// Every rule in DropRule order; value, relevance, pacing factor and score when it gets there.
// Returns false (without drawing from `rng`) as soon as the campaign's score bound falls below
// `cutoff`: it cannot win, whatever the remaining rules say; `v` is then partly filled.
// `v` is an out-parameter written field by field, and the ledger's counters are read into
// place: copying whole structs just written by narrower stores stalls store forwarding, which
// perf showed as a third of this function's samples.
bool Evaluate(Index index, const Context& ctx, Rng& rng, double cutoff, Verdict& v) {
  const Campaign& c = ctx.catalog.campaigns[index];
  const DecisionRequest& r = ctx.request;
  v.e = CandidateExplanation{.campaign_id = c.id};
  v.match.complete = true;
  if ((v.e.rule = PlacementRule(c, ctx)) != DropRule::kNone) return true;
  const BudgetLedger::View counters = r.live != nullptr ? r.live->Read(c.id, r.now_seconds)
                                                        : BudgetLedger::View{.tracked = true};
  if (r.live != nullptr) {
    if ((v.e.rule = BudgetRule(c, counters, *r.live)) != DropRule::kNone) return true;
    v.e.pacing_factor = PacingOf(c, counters, ctx);
  }
  if (!ValueOf(c, counters, ctx, cutoff, v.e)) return false;
  if ((v.e.rule = PersonRule(c, ctx, v.match)) != DropRule::kNone) return true;
  if (FrequencyCapped(c, ctx)) return v.e.rule = DropRule::kFrequencyCap, true;
  v.e.relevance = Relevance(c, v.match, ctx);
  double value = v.e.value_micros * v.e.relevance;
  if (value * 1000 < static_cast<double>(r.publisher->floor_cpm_micros)) {
    return v.e.rule = DropRule::kBelowFloor, true;
  }
  v.e.score = value * v.e.pacing_factor;
  // Ahead of its line, the factor is also the chance to bid at all.
  if (v.e.pacing_factor <= 0 || (v.e.pacing_factor < 1 && std::uniform_real_distribution<double>(
                                                              0, 1)(rng) >= v.e.pacing_factor)) {
    v.e.rule = DropRule::kPaced;
  }
  return true;
}

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

const Community* CommunityOf(const Campaign& c, const Catalog& catalog) {
  return c.community < catalog.communities.size() ? &catalog.communities[c.community] : nullptr;
}

// Per-thread scratch reused by every request, so a decision allocates nothing in the steady
// state: a stamp per catalog campaign deduplicates campaigns reached through several wallets
// or projects.
struct Scratch {
  std::vector<uint32_t> stamp;
  uint32_t epoch = 0;

  void Begin(size_t campaigns) {
    if (stamp.size() < campaigns || ++epoch == 0) {
      stamp.assign(std::max(campaigns, stamp.size()), 0);
      epoch = 1;
    }
  }
  // True the first time `c` is seen in this request.
  bool First(Index c) {
    if (stamp[c] == epoch) return false;
    stamp[c] = epoch;
    return true;
  }
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// The largest factors by which a campaign's score can exceed its catalog value_micros: the
// largest relevance multiplier times the learned-rate lift, and for campaigns pacing can
// boost, times the catch-up boost too.
struct ScoreHeadroom {
  double steady = 1;
  double boosted = 1;
  double max_lift = 1;  // the MaxRateLift factor inside both
};

ScoreHeadroom HeadroomOf(const Context& ctx) {
  const DecisionOptions& o = ctx.options;
  double relevance =
      1 + std::max(0.0, o.recency_weight) +
      std::max(0.0, o.projects_weight) *
          (static_cast<double>(std::max<size_t>(ctx.catalog.max_target_projects, 1)) - 1);
  if (ctx.request.live == nullptr) return {relevance, relevance, 1};
  const double max_lift = ctx.request.live->MaxRateLift();
  double steady = relevance * max_lift;
  return {steady, steady * (1 + std::max(0.0, o.pacing_max_boost)), max_lift};
}

// The best-scoring eligible campaigns (exact ties kept, in campaign order) and their matches.
struct Best {
  double score = -std::numeric_limits<double>::infinity();
  SmallVector<Index, 16> ties;
  SmallVector<Verdict, 16> verdicts;
  void Offer(Index c, const Verdict& v) {
    if (v.e.score < score) return;
    if (v.e.score > score) {
      score = v.e.score;
      ties.clear();
      verdicts.clear();
    }
    size_t pos = 0;
    while (pos < ties.size() && ties[pos] < c) ++pos;
    ties.push_back(c);
    verdicts.push_back(v);
    for (size_t k = ties.size() - 1; k > pos; --k) {
      std::swap(ties[k], ties[k - 1]);
      std::swap(verdicts[k], verdicts[k - 1]);
    }
  }
};

// The campaign id of `e` for LiveState::LiftCeiling.
int64_t LiftId(const Catalog::WalkEntry& e, const Context& ctx) {
  return e.lift_id != kNone ? e.lift_id : ctx.catalog.campaigns[e.campaign].id;
}

// What the walk reads of a catalog entry and of a WalkOrder entry: the walk filter, and the
// value the run is sorted by (the stop bound before the run's factor).
const Catalog::WalkEntry& WalkOf(const Catalog::WalkEntry& e) { return e; }
double SortValue(const Catalog::WalkEntry& e) { return e.value; }
const Catalog::WalkEntry& WalkOf(const WalkOrder::Entry& e) { return e.walk; }
double SortValue(const WalkOrder::Entry& e) { return e.bound; }

// Walks one run of a project's campaigns (sorted by SortValue, highest first) and stops as soon
// as SortValue x `stop_factor` cannot reach the best score found. Entries whose recency rule
// rejects even the person's newest interaction with this project, or without ads for the
// placement's format, are passed over without reading the campaign: through this project they
// cannot match (a campaign that matches through another of its projects is met in that
// project's walk, with the same bound).
//
// With live state, an entry whose own lift ceiling (LiveState::LiftCeiling) keeps it below the
// best score is passed over too (a CPC/CPA campaign whose learned rate fell below the default
// rate). `per_lift` = the run's score headroom without the lift factor.
//
// Catalog runs are sorted by catalog value, so their stop factor is the full headroom, with the
// largest learned-rate lift of any campaign; WalkOrder runs are sorted by value x lift ceiling,
// so theirs is per_lift x the order's slack.
template <typename Entry>
void WalkRun(std::span<const Entry> run, double stop_factor, double per_lift, uint32_t age,
             const Context& ctx, Scratch& scratch, Best& best, Rng& rng) {
  const uint8_t format_bit = static_cast<uint8_t>(1u << (ctx.format + (ctx.earlier ? 4 : 0)));
  const LiveState* live = ctx.request.live;
  Verdict v;
  for (const Entry& entry : run) {
    if (SortValue(entry) * stop_factor < best.score) return;
    const Catalog::WalkEntry& e = WalkOf(entry);
    if (e.max_age_days < age || (e.formats & format_bit) == 0) continue;
    if (live != nullptr && e.value * per_lift * live->LiftCeiling(LiftId(e, ctx)) < best.score) {
      continue;
    }
    if (!scratch.First(e.campaign)) continue;
    if (Evaluate(e.campaign, ctx, rng, best.score, v) && v.e.rule == DropRule::kNone) {
      best.Offer(e.campaign, v);
    }
  }
}

// Walks each wallet's projects into the campaigns targeting them, in the live walk order when
// one was built for this catalog, else in catalog order. A run whose first (highest) value
// cannot reach the best score is skipped without reading its entries.
void RunAuction(const Context& ctx, Best& best, Rng& rng) {
  Scratch& scratch = ThreadScratch();
  scratch.Begin(ctx.catalog.campaigns.size());
  const ScoreHeadroom headroom = HeadroomOf(ctx);
  const double steady_per_lift = headroom.steady / headroom.max_lift;
  const double boosted_per_lift = headroom.boosted / headroom.max_lift;
  const WalkOrder* order = ctx.order;
  const double slack = order ? order->slack() : 1;
  // The stop factors of the runs: see WalkRun.
  const double steady_stop = order ? steady_per_lift * slack : headroom.steady;
  const double boosted_stop = order ? boosted_per_lift * slack : headroom.boosted;
  const auto walk = [&](const auto& list, uint32_t age_days) {
    if (!list.steady.empty() && !(list.steady_top * steady_stop < best.score)) {
      WalkRun(list.steady, steady_stop, steady_per_lift, age_days, ctx, scratch, best, rng);
    }
    if (!list.boostable.empty() && !(list.boostable_top * boosted_stop < best.score)) {
      WalkRun(list.boostable, boosted_stop, boosted_per_lift, age_days, ctx, scratch, best, rng);
    }
  };
  for (uint32_t project : ctx.person->projects()) {
    const int64_t age = ctx.today - static_cast<int64_t>(ctx.person->NewestDay(project));
    const auto age_days = static_cast<uint32_t>(std::clamp<int64_t>(age, 0, Catalog::kAnyAge - 1));
    if (order) {
      walk(order->Find(project), age_days);
    } else {
      walk(ctx.catalog.FindProjectCampaigns(project), age_days);
    }
  }
}

// Explain: every campaign of the catalog, in catalog order, fully evaluated.
void RunExplainedAuction(const Context& ctx, Best& best, Rng& rng) {
  for (Index c = 0; c < ctx.catalog.campaigns.size(); ++c) {
    Verdict v;
    Evaluate(c, ctx, rng, -std::numeric_limits<double>::infinity(), v);
    ctx.request.explain->candidates.push_back(v.e);
    if (v.e.rule == DropRule::kNone) best.Offer(c, v);
  }
}

}  // namespace

std::string_view DropRuleName(DropRule rule) {
  static constexpr std::string_view kNames[] = {"eligible",
                                                "schedule",
                                                "publisher_not_allowed",
                                                "community_blocked",
                                                "community_not_allowed",
                                                "category_not_opted_in",
                                                "no_ad_for_format",
                                                "budget_untracked",
                                                "total_budget_exhausted",
                                                "daily_budget_exhausted",
                                                "no_matching_activity",
                                                "excluded_project",
                                                "existing_user",
                                                "frequency_cap",
                                                "below_floor",
                                                "paced",
                                                "budget_not_leased"};
  auto i = static_cast<size_t>(rule);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

std::string_view ArmFor(const Publisher& publisher, std::optional<std::string_view> ad_unit_id) {
  if (publisher.ab_arms.empty() || !ad_unit_id) return {};
  uint64_t h = 1469598103934665603ULL;
  for (char ch : *ad_unit_id) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ULL;
  return publisher.ab_arms[h % publisher.ab_arms.size()];
}

std::optional<Decision> Decide(const DecisionRequest& request, const Catalog& catalog,
                               const ActivityIndex& activity, Rng& rng) {
  Context ctx{.request = request,
              .catalog = catalog,
              .options = request.live != nullptr      ? request.live->options
                         : request.options != nullptr ? *request.options
                                                      : DefaultOptions(),
              .today = DayOf(request.now_seconds),
              .format = static_cast<size_t>(request.format),
              .earlier = request.earlier_variant,
              .arm = ArmFor(*request.publisher, request.ad_unit_id)};
  // The interactions of each request wallet, in request order. Not a Context member: GCC
  // zero-fills the whole aggregate (over 1 KB) when it holds this uninitialized buffer.
  WalletInteractions wallets;
  // One consistent lookup for all wallets (the spans stay valid for this request).
  activity.LookupAll(request.wallets,
                     [&](std::span<const Interaction> found) { wallets.push_back(found); });
  ctx.explore = request.live != nullptr && ctx.options.explore;
  // Held for the whole decision: its placement factors go with the ceilings it was built on.
  // The factors are keyed by campaign id: they hold for a new catalog until its first order.
  std::shared_ptr<const WalkOrder> order;
  if (request.live != nullptr) order = request.live->CurrentWalkOrder();
  if (order && ctx.explore) ctx.placements = order->placements();
  if (ctx.placements != nullptr && request.ad_unit_id && ctx.options.placement_ad_units) {
    ctx.unit = AdUnitKey(*request.ad_unit_id);
  }
  if (order && order->catalog_generation() == catalog.generation()) ctx.order = order.get();
  PersonProjects& person = ThreadPersonProjects();
  person.Build(wallets, catalog.project_id_limit);
  ctx.person = &person;
  if (request.explain != nullptr) {
    request.explain->arm = std::string(ctx.arm);
    request.explain->candidates.clear();
    request.explain->candidates.reserve(catalog.campaigns.size());
  }

  Best best;
  if (request.explain != nullptr) {
    RunExplainedAuction(ctx, best, rng);
  } else {
    RunAuction(ctx, best, rng);
  }
  if (best.ties.empty()) return std::nullopt;

  // Ties are in campaign order, so the draw does not depend on the order campaigns were met.
  size_t winner_pos = PickWeighted(
      best.ties.size(), [&](size_t i) { return AdWeightSum(catalog.campaigns[best.ties[i]], ctx); },
      rng);
  const Campaign& winner = catalog.campaigns[best.ties[winner_pos]];
  const Verdict& verdict = best.verdicts[winner_pos];

  // Without A/B arms every listed ad is usable: no need to read the ads to filter them.
  const std::vector<Index>& listed = AdList(winner, ctx);
  SmallVector<Index, 16> in_arm;
  if (winner.has_arm_ads) {
    for (Index a : listed) {
      if (AdInArm(catalog.ads[a], ctx)) in_arm.push_back(a);
    }
  }
  const std::span<const Index> ads = winner.has_arm_ads
                                         ? std::span<const Index>(in_arm.begin(), in_arm.size())
                                         : std::span<const Index>(listed);
  size_t ad_pos = PickWeighted(
      ads.size(), [&](size_t i) -> uint64_t { return catalog.ads[ads[i]].weight; }, rng);
  const Ad& ad = catalog.ads[ads[ad_pos]];
  if (request.explain != nullptr) {
    request.explain->winner_campaign_id = winner.id;
    request.explain->winner_ad_id = ad.id;
  }
  return Decision{.campaign = &winner,
                  .ad = &ad,
                  .community = CommunityOf(winner, catalog),
                  .matched_wallet = verdict.match.complete ? verdict.match.wallet
                                                           : MatchAll(winner, ctx).wallet,
                  .score = verdict.e.score,
                  .pacing_factor = verdict.e.pacing_factor};
}

std::optional<Decision> SampleDecision(const DecisionRequest& request, const Catalog& catalog,
                                       uint64_t counter) {
  const std::vector<Index>& samples =
      catalog.SampleAds(request.format, request.earlier_variant);
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
