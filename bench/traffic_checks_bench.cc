// Cost of the invalid-traffic checks on the click path (issue 18): the crawler list as one
// RE2 against browser and crawler user agents, a whole CheckClick (every check, the rate table
// included), and ClientIp behind a trusted proxy.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "events/click_token.h"
#include "events/crawler_matcher.h"
#include "events/traffic_checks.h"
#include "http/client_ip.h"

namespace adserver {
namespace {

constexpr char kBrowser[] =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.0.0 Safari/537.36";
constexpr char kCrawler[] =
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

void BM_CrawlerMatchBrowser(benchmark::State& state) {
  const events::CrawlerMatcher& matcher = events::CrawlerMatcher::Builtin();
  for (auto _ : state) benchmark::DoNotOptimize(matcher.Matches(kBrowser));
}
BENCHMARK(BM_CrawlerMatchBrowser);

void BM_CrawlerMatchCrawler(benchmark::State& state) {
  const events::CrawlerMatcher& matcher = events::CrawlerMatcher::Builtin();
  for (auto _ : state) benchmark::DoNotOptimize(matcher.Matches(kCrawler));
}
BENCHMARK(BM_CrawlerMatchCrawler);

// A valid click through every check; each iteration is another person and /24, so the rate
// table sees a new key every time (the worst case for its entries).
void BM_CheckClickValid(benchmark::State& state) {
  events::TrafficChecks checks(events::TrafficOptions{}, events::CrawlerMatcher::Builtin(),
                               nullptr);
  const uint32_t ua_hash = events::UserAgentHash(kBrowser);
  uint64_t n = 0;
  for (auto _ : state) {
    ++n;
    IpAddress ip = *ParseIp("10.0.0.1");
    ip.bytes[13] = static_cast<uint8_t>(n >> 8);
    ip.bytes[14] = static_cast<uint8_t>(n);
    events::ClickFacts facts{.user_agent = kBrowser,
                             .ip = ip,
                             .person = n,
                             .served_at_ms = 0,
                             .clicked_at_ms = 5000,
                             .serve_user_agent_hash = ua_hash};
    benchmark::DoNotOptimize(checks.CheckClick(facts));
  }
}
BENCHMARK(BM_CheckClickValid);

void BM_ClientIpBehindProxy(benchmark::State& state) {
  http::TrustedProxies proxies = *http::TrustedProxies::Parse({"10.0.0.0/8", "192.168.0.0/16"});
  http::Request request;
  request.remote_ip = "10.1.2.3";
  request.headers = {{"User-Agent", kBrowser}, {"X-Forwarded-For", "198.51.100.7, 10.0.0.9"}};
  for (auto _ : state) benchmark::DoNotOptimize(http::ClientIp(request, proxies));
}
BENCHMARK(BM_ClientIpBehindProxy);

}  // namespace
}  // namespace adserver

BENCHMARK_MAIN();
