// Cost of the invalid-traffic checks on the click path (issue 18): the crawler list as one
// RE2 against browser and crawler user agents, a whole CheckClick (every check, the rate table
// included), and ClientIp behind a trusted proxy. And the click token every live 200 seals and
// every click opens (issue 15): AES-256-GCM, and opening a first-format XChaCha20 token.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "events/click_token.h"
#include "events/decision_id.h"
#include "identity/key_ring.h"
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

events::ClickClaims TokenClaims() {
  return events::ClickClaims{.decision = events::NewDecisionId(1'767'225'600'123),
                             .publisher_id = 7,
                             .campaign_id = 123456,
                             .ad_id = 42,
                             .served_at = 1'767'225'600,
                             .price = 2'500'000,
                             .person = 0xfedcba9876543210ULL,
                             .arm = "b",
                             .ad_unit_id = "sidebar-top",
                             .serve_context = true,
                             .served_at_millis = 123,
                             .user_agent_hash = events::UserAgentHash(kBrowser)};
}

const identity::KeyRing& TokenKeys() {
  static const identity::KeyRing ring = *identity::KeyRing::Parse("1:" + std::string(64, 'a'));
  return ring;
}

// What a live 200 adds to its ctaUrl: the sealed, base64url token.
void BM_SealClick(benchmark::State& state) {
  const events::ClickClaims claims = TokenClaims();
  std::string out;
  for (auto _ : state) {
    out.clear();
    events::SealClick(TokenKeys(), claims, out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_SealClick);

void BM_OpenClick(benchmark::State& state) {
  const std::string token = events::SealClick(TokenKeys(), TokenClaims());
  for (auto _ : state) benchmark::DoNotOptimize(events::OpenClick(TokenKeys(), token));
}
BENCHMARK(BM_OpenClick);

// A token of the first format (XChaCha20-Poly1305; tests/unit/events/click_token_test.cc):
// format 2 is tried first, so these pay for one failed AES-GCM open too.
void BM_OpenClickFirstFormat(benchmark::State& state) {
  const std::string token =
      "ARAREhMUFXYXmBkaGxwdHh8gH5fPk7ELQBNlcpODR_xuMWvF9gkfpZqorasAtLwaKWHH0RWx7X0pcvI1F8I6NOs4H5b"
      "kCQtIlxnoh8481ds";
  for (auto _ : state) benchmark::DoNotOptimize(events::OpenClick(TokenKeys(), token));
}
BENCHMARK(BM_OpenClickFirstFormat);

}  // namespace
}  // namespace adserver

BENCHMARK_MAIN();
