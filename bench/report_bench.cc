// Reports (issue 16): GET /admin/v1/reports answered from the rollups of a year of traffic
// with 1 M clicks. The rollups are written through the events store (AddRollups) into a SQLite
// file kept between runs (ADSERVER_BENCH_REPORT_DB, default /tmp/adserver-report-bench.db);
// each benchmark calls the real handler (parse, plan, SQL GROUP BY, payouts, aggregation,
// JSON) without HTTP. Target: a 90-day daily report for one publisher in <= 50 ms.
//
// Dataset: 50 publishers; publisher 1 has 20 adUnitIds x 10 campaigns x 2 arms (400 rows a
// day), the others 4 adUnitIds x 5 campaigns (20 rows a day); 365 days; 100 fills and 1 or 3
// billed clicks per row (1.01 M clicks). Each row is one day's sum, so the minute and hour
// tables get one row per day too (minute rows past retention are pruned).

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "admin/authenticator.h"
#include "admin/reports_admin.h"
#include "common/check.h"
#include "common/clock.h"
#include "store/sqlite/sqlite_events_store.h"
#include "store/sqlite/sqlite_report_store.h"
#include "store/sqlite/sqlite_store.h"

namespace adserver::bench {
namespace {

constexpr int64_t kDay = 86400;
constexpr int64_t kLastDay = 1'767'225'600;  // 2026-01-01T00:00:00Z: the year ends the day before
constexpr int64_t kNow = kLastDay + 3600;
constexpr int kPublishers = 50;
constexpr int kDays = 365;

std::string DatabasePath() {
  const char* env = std::getenv("ADSERVER_BENCH_REPORT_DB");
  return env != nullptr ? env : "/tmp/adserver-report-bench.db";
}

// Copied from strings built once (assigning literals here trips GCC 12's -Wrestrict).
struct Names {
  std::vector<std::string> units;
  std::vector<std::string> arms{"a", "b"};
  Names() {
    for (int u = 0; u < 20; ++u) units.push_back("unit-" + std::to_string(u));
  }
};

std::vector<store::RollupRow> OneDay(int64_t day, int64_t& clicks) {
  static const Names names;
  std::vector<store::RollupRow> rows;
  for (int p = 1; p <= kPublishers; ++p) {
    const int units = p == 1 ? 20 : 4;
    const int campaigns = p == 1 ? 10 : 5;
    const int arms = p == 1 ? 2 : 1;
    for (int u = 0; u < units; ++u) {
      for (int c = 0; c < campaigns; ++c) {
        for (int a = 0; a < arms; ++a) {
          store::RollupRow& r = rows.emplace_back();
          r.bucket = day;
          r.publisher_id = p;
          r.ad_unit_id = names.units[u];
          r.campaign_id = 1 + (p * 7 + c) % 200;
          r.ad_id = r.campaign_id * 10 + a;
          r.arm = names.arms[a];
          r.requests = 110;
          r.fills = 100;
          r.no_fills = 10;
          r.impression_spend = 100 * 2'000;
          r.clicks = rows.size() % 2 == 0 ? 1 : 3;
          r.click_spend = r.clicks * 150'000;
          r.conversions = rows.size() % 50 == 0 ? 1 : 0;
          clicks += r.clicks;
        }
      }
    }
  }
  return rows;
}

void Generate(const std::string& path) {
  auto inventory = store::SqliteStore::Open(path);
  ADS_CHECK(inventory.ok()) << inventory.status().ToString();
  for (int p = 1; p <= kPublishers; ++p) {
    store::PublisherRecord publisher;
    publisher.name = std::to_string(p);
    publisher.name.insert(0, "publisher ");
    if (p % 2 == 0)
      publisher.payout = {.model = store::PayoutRule::Model::kCpm, .cpm_micros = 1'500'000};
    ADS_CHECK((*inventory)->CreatePublisher(publisher, kNow).ok());
  }
  auto events = store::SqliteEventsStore::Open(path);
  ADS_CHECK(events.ok()) << events.status().ToString();
  int64_t clicks = 0;
  for (int d = kDays; d >= 1; --d) {
    std::vector<store::RollupRow> rows = OneDay(kLastDay - d * kDay, clicks);
    ADS_CHECK((*events)->AddRollups(rows).ok());
  }
  ADS_CHECK((*events)->Prune(store::EventRetention{}, kNow).ok());
  std::fprintf(stderr, "generated %s: %d days, %lld clicks\n", path.c_str(), kDays,
               static_cast<long long>(clicks));
}

struct Fixture {
  FakeClock clock{kNow * 1'000'000};
  std::unique_ptr<store::SqliteStore> inventory;
  std::unique_ptr<store::SqliteReportStore> reports;
  std::unique_ptr<admin::Authenticator> auth;
  std::unique_ptr<admin::ReportsAdminApi> api;

  Fixture() {
    const std::string path = DatabasePath();
    if (!std::filesystem::exists(path)) Generate(path);
    inventory = std::move(store::SqliteStore::Open(path)).value();
    reports = std::move(store::SqliteReportStore::Open(path)).value();
    auth = std::make_unique<admin::Authenticator>(admin::AdminOptions{}, nullptr, clock);
    api = std::make_unique<admin::ReportsAdminApi>(*reports, *inventory, clock, *auth);
  }
};

Fixture& Shared() {
  static Fixture fixture;
  return fixture;
}

void RunReport(benchmark::State& state, const std::string& query) {
  Fixture& f = Shared();
  http::Request request;
  request.method = http::Method::kGet;
  request.path = "/admin/v1/reports";
  request.query = query;
  size_t bytes = 0;
  for (auto _ : state) {
    http::Response response = f.api->Report(request, {});
    ADS_CHECK(response.status == 200) << response.body;
    bytes = response.body.size();
    benchmark::DoNotOptimize(response);
  }
  state.counters["body_bytes"] = static_cast<double>(bytes);
}

// The target: 90 days, daily, one publisher (36 k rollup rows summed into 90).
void BM_Daily90DaysOnePublisher(benchmark::State& state) {
  RunReport(state, "from=2025-10-03&to=2026-01-01&granularity=day&publisherId=1");
}
BENCHMARK(BM_Daily90DaysOnePublisher)->Unit(benchmark::kMillisecond);

// The same split by adUnitId (1800 rows).
void BM_Daily90DaysOnePublisherByAdUnit(benchmark::State& state) {
  RunReport(state, "from=2025-10-03&to=2026-01-01&granularity=day&publisherId=1&groupBy=adUnitId");
}
BENCHMARK(BM_Daily90DaysOnePublisherByAdUnit)->Unit(benchmark::kMillisecond);

// The whole network, a year, by publisher (504 k rollup rows summed into 50).
void BM_TotalYearAllPublishersByPublisher(benchmark::State& state) {
  RunReport(state, "from=2025-01-01&to=2026-01-01&granularity=total&groupBy=publisher");
}
BENCHMARK(BM_TotalYearAllPublishersByPublisher)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace adserver::bench

BENCHMARK_MAIN();
