#include "common/metrics_text.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "common/thread_counters.h"

namespace adserver {
namespace {

TEST(MetricsTextTest, FamiliesSamplesAndEscapedLabels) {
  std::string out;
  MetricsText m(out);
  m.Family("x_total", "counter", "Things.");
  m.Sample("x_total", {{"route", "/v1/click/{token}"}, {"why", "a\"b\\c\nd"}}, uint64_t{3});
  m.Sample("x_total", {}, 0.5);
  m.Sample("x_total", {}, int64_t{-2});
  EXPECT_EQ(out,
            "# HELP x_total Things.\n# TYPE x_total counter\n"
            "x_total{route=\"/v1/click/{token}\",why=\"a\\\"b\\\\c\\nd\"} 3\n"
            "x_total 0.5\nx_total -2\n");
}

TEST(MetricsTextTest, HistogramBucketsAreCumulative) {
  std::string out;
  MetricsText m(out);
  const double bounds[] = {0.001, 0.01};
  const uint64_t counts[] = {2, 3, 1};  // <= 1 ms, <= 10 ms, above
  m.Histogram("d_seconds", {{"route", "/a"}}, bounds, 2, counts, 0.25);
  EXPECT_EQ(out,
            "d_seconds_bucket{route=\"/a\",le=\"0.001\"} 2\n"
            "d_seconds_bucket{route=\"/a\",le=\"0.01\"} 5\n"
            "d_seconds_bucket{route=\"/a\",le=\"+Inf\"} 6\n"
            "d_seconds_sum{route=\"/a\"} 0.25\nd_seconds_count{route=\"/a\"} 6\n");
}

TEST(ThreadCountersTest, SumsEveryThreadsCountsExactly) {
  ThreadCounters<3> counters;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&counters] {
      for (int i = 0; i < 100000; ++i) counters.Add(i % 2);
      counters.Add(2, 5);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(counters.Sum(0), 8u * 50000);
  EXPECT_EQ(counters.Sum(1), 8u * 50000);
  EXPECT_EQ(counters.Sum(2), 8u * 5);
}

}  // namespace
}  // namespace adserver
