#include "demo/traffic.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

namespace adserver::demo {
namespace {

constexpr int64_t kHour = 3600;
constexpr int64_t kDay = 86400;
// Of the page's requests, this share on average finds an ad.
constexpr double kFillRate = 0.82;
// Of the clicks, this share repeats a click already billed (a double click).
constexpr double kDuplicateClickRate = 0.02;

constexpr DemoAdUnit kAdUnits[] = {
    {"home-hero", 0.30, 1.4},            // LANDSCAPE
    {"article-leaderboard", 0.25, 0.8},  // LONG_BANNER
    {"sidebar", 0.30, 0.9},              // SHORT_BANNER
    {"feed", 0.15, 1.1},                 // NO_IMAGE
};

// Traffic through a UTC day: a trough at night, a peak in the (European/American) afternoon.
double HourFactor(int hour) {
  return 1.0 + 0.6 * std::cos(2 * std::numbers::pi * (hour - 15) / 24.0);
}

// Weekends are quieter; 1970-01-01 was a Thursday.
double WeekdayFactor(int64_t day_start) {
  int weekday = static_cast<int>((day_start / kDay + 4) % 7);  // 0 = Sunday
  return weekday == 0 || weekday == 6 ? 0.8 : 1.0;
}

// A rough head block of `chain` at `t`, so block numbers look like their chain's.
int64_t BlockAt(int64_t chain, int64_t t) {
  constexpr int64_t kAnchor = 1'735'689'600;  // 2025-01-01 UTC
  const int64_t since = t - kAnchor;
  switch (chain) {
    case 42161:
      return 292'000'000 + since * 4;  // 0.25 s blocks
    case 10:
      return 130'000'000 + since / 2;
    case 8453:
      return 24'600'000 + since / 2;
    default:
      return 21'525'890 + since / 12;
  }
}

template <size_t N>
void Fill(std::array<uint8_t, N>& bytes, std::mt19937_64& rng) {
  for (size_t i = 0; i < N; i += 8) {
    uint64_t v = rng();
    for (size_t k = 0; k < 8 && i + k < N; ++k) bytes[i + k] = static_cast<uint8_t>(v >> (8 * k));
  }
}

class Generator {
 public:
  Generator(store::Id publisher, int64_t now, uint64_t seed)
      : publisher_(publisher), now_(now), rng_(seed) {}

  void Hour(const DemoTrafficCampaign& c, int64_t hour_start, double factor, DemoTraffic& out) {
    for (const DemoAdUnit& unit : kAdUnits) {
      double mean = c.daily_impressions / 24.0 * factor * unit.share;
      int64_t fills = std::poisson_distribution<int64_t>(std::max(mean, 0.01))(rng_);
      if (fills == 0) continue;
      store::RollupRow row{.bucket = hour_start,
                           .publisher_id = publisher_,
                           .ad_unit_id = unit.id,
                           .campaign_id = c.campaign_id,
                           .ad_id = c.ad_id,
                           .requests = fills,
                           .fills = fills};
      if (c.model == PricingModel::kCpm) row.impression_spend = fills * c.bid_micros / 1000;
      out.serving.push_back(row);
      no_fills_[&unit - kAdUnits] += static_cast<double>(fills) * (1 / kFillRate - 1);
      int64_t clicks =
          std::binomial_distribution<int64_t>(fills, std::min(c.ctr * unit.ctr_factor, 1.0))(rng_);
      for (int64_t i = 0; i < clicks; ++i) Click(c, unit.id, hour_start, out);
      int64_t views = std::binomial_distribution<int64_t>(
          fills, std::min(c.view_conversions_per_impression, 1.0))(rng_);
      for (int64_t i = 0; i < views; ++i) {
        int64_t served = hour_start + Uniform(0, kHour - 1);
        Conversion(c, unit.id, RandomDecision(), served, /*click=*/false, out);
      }
    }
  }

  // The requests of the hour that found no ad, one row per ad unit.
  void NoFills(int64_t hour_start, DemoTraffic& out) {
    for (size_t u = 0; u < std::size(kAdUnits); ++u) {
      int64_t n = std::llround(no_fills_[u] * std::uniform_real_distribution<>(0.8, 1.2)(rng_));
      no_fills_[u] = 0;
      if (n == 0) continue;
      out.serving.push_back(store::RollupRow{.bucket = hour_start,
                                             .publisher_id = publisher_,
                                             .ad_unit_id = kAdUnits[u].id,
                                             .requests = n,
                                             .no_fills = n});
    }
  }

  // Multiplies a day's volume by 1 ± ~15 %.
  double DayNoise() { return std::clamp(std::normal_distribution<>(1.0, 0.15)(rng_), 0.6, 1.4); }
  double HourNoise() { return std::clamp(std::normal_distribution<>(1.0, 0.1)(rng_), 0.7, 1.3); }

 private:
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  store::DecisionIdBytes RandomDecision() {
    store::DecisionIdBytes id;
    Fill(id, rng_);
    return id;
  }

  void Click(const DemoTrafficCampaign& c, const char* unit, int64_t hour_start, DemoTraffic& out) {
    store::ClickRecord click;
    click.decision_id = RandomDecision();
    click.publisher_id = publisher_;
    click.ad_unit_id = unit;
    click.campaign_id = c.campaign_id;
    click.ad_id = c.ad_id;
    click.clicked_at = hour_start + Uniform(0, kHour - 1);
    click.served_at = click.clicked_at - Uniform(2, 180);
    click.price = c.model == PricingModel::kCpc ? c.bid_micros : 0;
    click.person = rng_();
    out.clicks.push_back(click);
    if (std::bernoulli_distribution(kDuplicateClickRate)(rng_)) {
      store::ClickRecord again = click;
      again.clicked_at = std::min(click.clicked_at + Uniform(1, 5), hour_start + kHour - 1);
      again.price = 0;
      again.status = store::ClickStatus::kDuplicate;
      out.clicks.push_back(again);
    }
    if (std::bernoulli_distribution(std::min(c.conversions_per_click, 1.0))(rng_)) {
      Conversion(c, unit, click.decision_id, click.clicked_at, /*click=*/true, out, click.person);
    }
  }

  // A conversion touched at `touched_at`, minutes to hours later, never at or after now.
  void Conversion(const DemoTrafficCampaign& c, const char* unit,
                  const store::DecisionIdBytes& decision, int64_t touched_at, bool click,
                  DemoTraffic& out, uint64_t person = 0) {
    int64_t delay = std::llround(std::exponential_distribution<>(1.0 / 1800)(rng_)) + 30;
    int64_t block_time = std::min(touched_at + delay, now_ - 1);
    store::ConversionCandidate candidate;
    candidate.count_once_per_person = false;
    store::ConversionRecord& r = candidate.record;
    r.campaign_id = c.campaign_id;
    r.ad_id = c.ad_id;
    r.publisher_id = publisher_;
    r.ad_unit_id = unit;
    r.decision_id = decision;
    Fill(r.wallet.bytes, rng_);
    r.person = person != 0 ? person : rng_();
    r.chain_id = c.chain_id;
    Fill(r.tx_hash, rng_);
    r.log_index = std::bernoulli_distribution(0.6)(rng_) ? Uniform(0, 300) : -1;
    r.block_number = BlockAt(c.chain_id, block_time);
    Fill(r.block_hash, rng_);
    r.block_time = block_time;
    r.click_touch = click;
    r.touched_at = touched_at;
    r.price = c.model == PricingModel::kCpa ? c.bid_micros : 0;
    r.confirmed = true;
    out.conversions.push_back(std::move(candidate));
  }

  const store::Id publisher_;
  const int64_t now_;
  std::mt19937_64 rng_;
  double no_fills_[std::size(kAdUnits)] = {};
};

}  // namespace

std::span<const DemoAdUnit> DemoAdUnits() { return kAdUnits; }

DemoTraffic GenerateDemoTraffic(std::span<const DemoTrafficCampaign> campaigns,
                                store::Id publisher_id, int64_t now,
                                const DemoTrafficOptions& options) {
  DemoTraffic out;
  Generator gen(publisher_id, now, options.seed);
  const int64_t today = now - now % kDay;
  for (int d = options.days; d >= 1; --d) {
    const int64_t day = today - d * kDay;
    // A slow upward trend over the week, the weekday shape, and each campaign's own day noise.
    const double trend = 1.0 + 0.03 * (options.days - d);
    std::vector<double> day_noise;
    for (size_t c = 0; c < campaigns.size(); ++c) day_noise.push_back(gen.DayNoise());
    for (int h = 0; h < 24; ++h) {
      const int64_t hour = day + h * kHour;
      const double shape = trend * WeekdayFactor(day) * HourFactor(h);
      for (size_t c = 0; c < campaigns.size(); ++c) {
        gen.Hour(campaigns[c], hour, shape * day_noise[c] * gen.HourNoise(), out);
      }
      gen.NoFills(hour, out);
    }
  }
  return out;
}

Status WriteDemoTraffic(store::EventsStore& events, DemoTraffic& traffic, int64_t now) {
  ADS_RETURN_IF_ERROR(events.AddRollups(traffic.serving));
  ADS_RETURN_IF_ERROR(events.InsertClicks(traffic.clicks));
  return events.InsertConversions(traffic.conversions, now).status();
}

}  // namespace adserver::demo
