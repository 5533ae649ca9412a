// adserver-simulate: plays decision-quality scenarios (bench/scenarios/*.json) through the real
// decision code and prints revenue / oracle per policy (issue 36; sim/simulation.h).
//
//   adserver-simulate bench/scenarios/*.json                  # 10 seeds, explore and greedy
//   adserver-simulate --seeds 3 --check bench/scenarios/*.json # CI: each scenario's "guard"
//   adserver-simulate --min-share 0.9 FILE                     # exit 1 below 0.9
//   adserver-simulate --peer-priors on FILE                    # priors fitted from peers
//   adserver-simulate --placement-events 0 FILE                # one rate per campaign
//   adserver-simulate --placement-units off FILE               # per publisher, not adUnitId
//
// For each scenario and policy: the median, worst and best share of the oracle's revenue over
// the seeds, the median share in each tenth of the run (regret over time), each campaign's share
// of impressions (mean over seeds) and the decisions per second.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "sim/simulation.h"

namespace {

using adserver::sim::Policy;
using adserver::sim::RunResult;
using adserver::sim::Scenario;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Plays every seed; prints one row. Returns the median share.
double Report(const Scenario& s, const Policy& policy, int seeds) {
  std::vector<double> shares;
  std::vector<std::vector<double>> deciles(10);
  std::vector<double> impressions(s.campaigns.size(), 0);
  double seconds = 0;
  double decisions = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const RunResult r = adserver::sim::Run(s, policy, static_cast<uint64_t>(seed));
    shares.push_back(r.share());
    for (size_t d = 0; d < 10; ++d) deciles[d].push_back(r.decile_share[d]);
    for (size_t c = 0; c < impressions.size(); ++c) {
      impressions[c] += static_cast<double>(r.impressions[c]) / static_cast<double>(r.decisions);
    }
    seconds += r.seconds;
    decisions += static_cast<double>(r.decisions);
  }
  const double median = Median(shares);
  std::printf("  %-8s median %.3f  worst %.3f  best %.3f  | by tenth:", policy.name.c_str(), median,
              *std::min_element(shares.begin(), shares.end()),
              *std::max_element(shares.begin(), shares.end()));
  for (const auto& d : deciles) std::printf(" %.2f", Median(d));
  std::printf("  | %.2f M decisions/s\n", seconds > 0 ? decisions / seconds / 1e6 : 0);
  std::printf("  %-8s impressions:", "");
  for (size_t c = 0; c < impressions.size(); ++c) {
    std::printf(" %lld=%.3f", static_cast<long long>(s.campaigns[c].id), impressions[c] / seeds);
  }
  std::printf("\n");
  return median;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Plays decision-quality scenarios through the decision engine (issue 36)"};
  std::vector<std::string> files;
  int seeds = 10;
  std::string policy = "both";
  double min_share = 0;
  bool check = false;
  std::string peer_priors = "off";
  double placement_events = -1;
  std::string placement_units;
  app.add_option("scenarios", files, "Scenario files (JSON)")->required()->check(CLI::ExistingFile);
  app.add_option("--seeds", seeds, "Seeds per scenario and policy")->check(CLI::Range(1, 1000));
  app.add_option("--policy", policy, "explore, greedy or both")
      ->check(CLI::IsMember({"explore", "greedy", "both"}));
  app.add_option("--min-share", min_share,
                 "Exit 1 when exploration's median share of the oracle is below this in a "
                 "scenario (a regression guard)");
  app.add_flag("--check", check,
               "Exit 1 when exploration's median share is below a scenario's \"guard\"");
  app.add_option("--peer-priors", peer_priors,
                 "Exploration's priors fitted from peers (on) or the catalog's default rate "
                 "(off, the server's default)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--placement-events", placement_events,
                 "Per-placement learning's pseudo-events (decision.placement_prior_events; 0 = "
                 "off; default: the server's)")
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--placement-units", placement_units,
                 "Per-placement learning within a publisher, per adUnitId "
                 "(decision.placement_ad_units; default: the server's)")
      ->check(CLI::IsMember({"on", "off"}));
  CLI11_PARSE(app, argc, argv);
  std::optional<bool> units;
  if (!placement_units.empty()) units = placement_units == "on";
  std::optional<double> placement;
  if (placement_events >= 0) placement = placement_events;

  int failed = 0;
  for (const std::string& file : files) {
    auto scenario = adserver::sim::LoadScenario(file);
    if (!scenario.ok()) {
      std::fprintf(stderr, "%s: %s", file.c_str(), scenario.status().message().c_str());
      for (const auto& d : scenario.status().details()) {
        std::fprintf(stderr, " (%s: %s)", d.field.c_str(), d.message.c_str());
      }
      std::fprintf(stderr, "\n");
      return 2;
    }
    std::printf("%s: %lld requests over %g days, %zu campaigns, %d seeds\n  %s\n",
                scenario->name.c_str(), static_cast<long long>(scenario->requests), scenario->days,
                scenario->campaigns.size(), seeds, scenario->description.c_str());
    if (policy != "greedy") {
      const bool peers = peer_priors == "on";
      const double median = Report(*scenario,
                                   {.name = peers ? "explore+peers" : "explore",
                                    .explore = true,
                                    .peer_priors = peers,
                                    .placement_prior_events = placement,
                                    .placement_ad_units = units},
                                   seeds);
      const double floor = std::max(min_share, check ? scenario->guard : 0.0);
      if (median < floor) {
        std::printf("  FAIL: explore's median share %.3f is below %.3f\n", median, floor);
        ++failed;
      }
    }
    if (policy != "explore") Report(*scenario, {.name = "greedy", .explore = false}, seeds);
    std::fflush(stdout);
  }
  return failed == 0 ? 0 : 1;
}
