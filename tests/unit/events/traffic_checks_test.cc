#include "events/traffic_checks.h"

#include <gtest/gtest.h>

#include <fstream>

#include "events/click_token.h"
#include "support/temp_dir.h"

namespace adserver::events {
namespace {

constexpr char kBrowser[] =
    "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0";
constexpr int64_t kServedMs = 1'700'000'000'250;

ClickFacts GoodClick() {
  return ClickFacts{.user_agent = kBrowser,
                    .ip = ParseIp("198.51.100.7"),
                    .person = 77,
                    .served_at_ms = kServedMs,
                    .clicked_at_ms = kServedMs + 5000,
                    .serve_user_agent_hash = UserAgentHash(kBrowser)};
}

TEST(InvalidReasonTest, NamesAreStable) {
  EXPECT_EQ(InvalidReasonName(InvalidReason::kNone), "");
  EXPECT_EQ(InvalidReasonName(InvalidReason::kMissingUserAgent), "missing_user_agent");
  EXPECT_EQ(InvalidReasonName(InvalidReason::kCrawler), "crawler");
  EXPECT_EQ(InvalidReasonName(InvalidReason::kBlockedIp), "blocked_ip");
  EXPECT_EQ(InvalidReasonName(InvalidReason::kTooFast), "too_fast");
  EXPECT_EQ(InvalidReasonName(InvalidReason::kUserAgentMismatch), "user_agent_mismatch");
  EXPECT_EQ(InvalidReasonName(InvalidReason::kOriginNotAllowed), "origin_not_allowed");
  EXPECT_EQ(InvalidReasonName(InvalidReason::kIpRateLimit), "ip_rate_limit");
  EXPECT_EQ(InvalidReasonName(InvalidReason::kPersonRateLimit), "person_rate_limit");
  EXPECT_EQ(InvalidReasonName(InvalidReason::kWalletRate), "wallet_rate");
  EXPECT_EQ(InvalidReasonName(InvalidReason::kWalletPublishers), "wallet_publishers");
}

TEST(TrafficCheckTest, MissingUserAgent) {
  EXPECT_TRUE(IsMissingUserAgent(""));
  EXPECT_TRUE(IsMissingUserAgent(" \t "));
  EXPECT_FALSE(IsMissingUserAgent("x"));
}

TEST(TrafficCheckTest, TooFastUsesTheThreshold) {
  EXPECT_TRUE(IsTooFast(1000, 1999, 1000));
  EXPECT_FALSE(IsTooFast(1000, 2000, 1000));
  EXPECT_TRUE(IsTooFast(1000, 2400, 1500));
  EXPECT_FALSE(IsTooFast(1000, 1000, 0));          // off
  EXPECT_FALSE(IsTooFast(std::nullopt, 0, 1000));  // an old token
}

TEST(TrafficCheckTest, UserAgentMismatch) {
  EXPECT_FALSE(IsUserAgentMismatch(UserAgentHash(kBrowser), kBrowser));
  EXPECT_TRUE(IsUserAgentMismatch(UserAgentHash(kBrowser), "Mozilla/5.0 other"));
  EXPECT_TRUE(IsUserAgentMismatch(UserAgentHash(""), kBrowser));
  EXPECT_FALSE(IsUserAgentMismatch(std::nullopt, kBrowser));
}

class TrafficChecksTest : public ::testing::Test {
 protected:
  TrafficChecksTest() {
    std::ofstream(dir_.File("block.txt")) << "203.0.113.0/24\n";
    blocklist_ = std::move(*IpBlocklist::Load({dir_.File("block.txt")}));
  }
  testing::TempDir dir_;
  std::unique_ptr<IpBlocklist> blocklist_;
};

TEST(TrafficCheckTest, OriginNotAllowedComparesTheReferersOrigin) {
  const std::vector<std::string> allowed = {"https://news.example", "https://news.example:8443"};
  EXPECT_EQ(RefererOrigin("https://news.example/a/b?c#d"), "https://news.example");
  EXPECT_EQ(RefererOrigin("https://news.example:8443?x"), "https://news.example:8443");
  EXPECT_EQ(RefererOrigin("https://news.example"), "https://news.example");
  EXPECT_EQ(RefererOrigin("not a url"), "");
  EXPECT_EQ(RefererOrigin("https:///path"), "");
  EXPECT_FALSE(IsOriginNotAllowed("https://news.example/story", allowed));
  EXPECT_FALSE(IsOriginNotAllowed("https://news.example:8443/", allowed));
  EXPECT_TRUE(IsOriginNotAllowed("https://evil.example/news.example", allowed));
  EXPECT_TRUE(IsOriginNotAllowed("http://news.example/", allowed));  // another scheme
  EXPECT_TRUE(IsOriginNotAllowed("garbage", allowed));
  EXPECT_FALSE(IsOriginNotAllowed("", allowed));                  // no Referer sent
  EXPECT_FALSE(IsOriginNotAllowed("https://evil.example/", {}));  // any origin allowed
}

TEST_F(TrafficChecksTest, AGoodClickPasses) {
  TrafficChecks checks(TrafficOptions{}, CrawlerMatcher::Builtin(), blocklist_.get());
  EXPECT_EQ(checks.CheckClick(GoodClick()), InvalidReason::kNone);
}

TEST_F(TrafficChecksTest, EachCheckNamesItsReason) {
  TrafficChecks checks(TrafficOptions{}, CrawlerMatcher::Builtin(), blocklist_.get());
  ClickFacts no_agent = GoodClick();
  no_agent.user_agent = "";
  EXPECT_EQ(checks.CheckClick(no_agent), InvalidReason::kMissingUserAgent);
  ClickFacts crawler = GoodClick();
  crawler.user_agent = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
  EXPECT_EQ(checks.CheckClick(crawler), InvalidReason::kCrawler);
  ClickFacts blocked = GoodClick();
  blocked.ip = ParseIp("203.0.113.9");
  EXPECT_EQ(checks.CheckClick(blocked), InvalidReason::kBlockedIp);
  ClickFacts fast = GoodClick();
  fast.clicked_at_ms = kServedMs + 999;
  EXPECT_EQ(checks.CheckClick(fast), InvalidReason::kTooFast);
  ClickFacts other_agent = GoodClick();
  other_agent.serve_user_agent_hash = UserAgentHash("Mozilla/5.0 (the serve's browser)");
  EXPECT_EQ(checks.CheckClick(other_agent), InvalidReason::kUserAgentMismatch);
  const std::vector<std::string> allowed = {"https://news.example"};
  ClickFacts elsewhere = GoodClick();
  elsewhere.referer = "https://evil.example/";
  elsewhere.allowed_origins = allowed;
  EXPECT_EQ(checks.CheckClick(elsewhere), InvalidReason::kOriginNotAllowed);
}

TEST_F(TrafficChecksTest, AClickOnAnInvalidImpressionIsInvalidFirst) {
  TrafficChecks checks(TrafficOptions{}, CrawlerMatcher::Builtin(), blocklist_.get());
  ClickFacts click = GoodClick();
  click.invalid_impression = true;
  click.user_agent = "curl/8.5.0";  // would be a crawler too
  EXPECT_EQ(checks.CheckClick(click), InvalidReason::kInvalidImpression);
  EXPECT_EQ(InvalidReasonName(InvalidReason::kInvalidImpression), "invalid_impression");
  // It was not counted toward the rate limits: a good click of that address still passes.
  EXPECT_EQ(checks.CheckClick(GoodClick()), InvalidReason::kNone);
}

TEST_F(TrafficChecksTest, TheFirstFailingCheckWins) {
  TrafficChecks checks(TrafficOptions{}, CrawlerMatcher::Builtin(), blocklist_.get());
  // A crawler from a blocked address, too fast: crawler comes first.
  ClickFacts click = GoodClick();
  click.user_agent = "curl/8.5.0";
  click.ip = ParseIp("203.0.113.9");
  click.clicked_at_ms = kServedMs;
  EXPECT_EQ(checks.CheckClick(click), InvalidReason::kCrawler);
  click.user_agent = kBrowser;
  EXPECT_EQ(checks.CheckClick(click), InvalidReason::kBlockedIp);
  click.ip = ParseIp("198.51.100.7");
  EXPECT_EQ(checks.CheckClick(click), InvalidReason::kTooFast);
}

TEST_F(TrafficChecksTest, RateLimitsPerTruncatedAddressThenPerPerson) {
  TrafficChecks checks(TrafficOptions{}, CrawlerMatcher::Builtin(), blocklist_.get());
  EXPECT_EQ(checks.CheckClick(GoodClick()), InvalidReason::kNone);
  // Another address of the same /24 and another person: the address's minute is used up.
  ClickFacts neighbour = GoodClick();
  neighbour.ip = ParseIp("198.51.100.200");
  neighbour.person = 78;
  EXPECT_EQ(checks.CheckClick(neighbour), InvalidReason::kIpRateLimit);
  // The same person from elsewhere: the person's minute is used up.
  ClickFacts elsewhere = GoodClick();
  elsewhere.ip = ParseIp("192.0.2.1");
  EXPECT_EQ(checks.CheckClick(elsewhere), InvalidReason::kPersonRateLimit);
  // Someone else entirely.
  ClickFacts stranger = GoodClick();
  stranger.ip = ParseIp("192.0.2.99");
  stranger.person = 79;
  EXPECT_EQ(checks.CheckClick(stranger), InvalidReason::kIpRateLimit);  // 192.0.2.0/24 counted
  stranger.ip = ParseIp("2001:db8::1");
  EXPECT_EQ(checks.CheckClick(stranger), InvalidReason::kNone);
}

TEST_F(TrafficChecksTest, ThresholdsAreSettings) {
  TrafficOptions options;
  options.require_user_agent = false;
  options.block_crawlers = false;
  options.min_click_delay_ms = 0;
  options.require_same_user_agent = false;
  options.check_click_origin = false;
  options.click_limits = {{60, 2}};
  TrafficChecks checks(options, CrawlerMatcher::Builtin(), blocklist_.get());
  ClickFacts click = GoodClick();
  click.user_agent = "";
  click.clicked_at_ms = kServedMs;
  const std::vector<std::string> allowed = {"https://news.example"};
  click.referer = "https://evil.example/";
  click.allowed_origins = allowed;
  EXPECT_EQ(checks.CheckClick(click), InvalidReason::kNone);
  click.user_agent = "curl/8.5.0";
  EXPECT_EQ(checks.CheckClick(click), InvalidReason::kNone);
  EXPECT_EQ(checks.CheckClick(click), InvalidReason::kIpRateLimit);  // third in the minute
}

TEST_F(TrafficChecksTest, WithoutABlocklistNoAddressIsBlocked) {
  TrafficChecks checks(TrafficOptions{}, CrawlerMatcher::Builtin(), nullptr);
  ClickFacts click = GoodClick();
  click.ip = ParseIp("203.0.113.9");
  EXPECT_EQ(checks.CheckClick(click), InvalidReason::kNone);
}

TEST_F(TrafficChecksTest, EventsHaveTheirOwnLimits) {
  TrafficOptions options;
  options.event_limits = {{60, 2}};
  TrafficChecks checks(options, CrawlerMatcher::Builtin(), blocklist_.get());
  EventFacts event{.user_agent = kBrowser,
                   .ip = ParseIp("198.51.100.7"),
                   .person = 5,
                   .now_seconds = 1'700'000'000};
  EXPECT_EQ(checks.CheckEvent(event), InvalidReason::kNone);
  EXPECT_EQ(checks.CheckEvent(event), InvalidReason::kNone);
  EXPECT_EQ(checks.CheckEvent(event), InvalidReason::kIpRateLimit);
  // A click from the same address is counted apart from events.
  EXPECT_EQ(checks.CheckClick(GoodClick()), InvalidReason::kNone);
  event.user_agent = "";
  EXPECT_EQ(checks.CheckEvent(event), InvalidReason::kMissingUserAgent);
  event.user_agent = "python-requests/2.31";
  EXPECT_EQ(checks.CheckEvent(event), InvalidReason::kCrawler);
  event.user_agent = kBrowser;
  event.ip = ParseIp("203.0.113.1");
  EXPECT_EQ(checks.CheckEvent(event), InvalidReason::kBlockedIp);
}

TEST_F(TrafficChecksTest, ImpressionsFromBrowsersAreCheckedForAgentAndAddressThenWallets) {
  TrafficOptions options;
  options.wallet_serves_per_minute = 2;
  TrafficChecks checks(options, CrawlerMatcher::Builtin(), blocklist_.get());
  std::vector<Address> wallets{*ParseAddress("0x1111111111111111111111111111111111111111")};
  ImpressionFacts browser{.user_agent = kBrowser,
                          .ip = ParseIp("198.51.100.7"),
                          .browser = true,
                          .wallets = wallets,
                          .publisher_id = 3,
                          .now_seconds = 1'700'000'040};
  EXPECT_EQ(checks.CheckImpression(browser), InvalidReason::kNone);
  ImpressionFacts crawler = browser;
  crawler.user_agent = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
  EXPECT_EQ(checks.CheckImpression(crawler), InvalidReason::kCrawler);  // 2nd serve of the wallet
  ImpressionFacts blocked = browser;
  blocked.ip = ParseIp("203.0.113.9");
  // The address comes first; the wallet's 3rd serve is still counted.
  EXPECT_EQ(checks.CheckImpression(blocked), InvalidReason::kBlockedIp);
  EXPECT_EQ(checks.CheckImpression(browser), InvalidReason::kWalletRate);
  ImpressionFacts no_agent = browser;
  no_agent.user_agent = "";
  no_agent.wallets = {};
  EXPECT_EQ(checks.CheckImpression(no_agent), InvalidReason::kMissingUserAgent);
}

TEST_F(TrafficChecksTest, APublishersBackendIsCheckedForWalletsOnly) {
  TrafficChecks checks(TrafficOptions{}, CrawlerMatcher::Builtin(), blocklist_.get());
  std::vector<Address> wallets{*ParseAddress("0x2222222222222222222222222222222222222222")};
  // The server entry calls from the publisher's servers: their user agent and address are
  // not the visitor's, so neither a library's user agent nor a datacenter address counts.
  ImpressionFacts backend{.user_agent = "axios/1.6.8",
                          .ip = ParseIp("203.0.113.9"),
                          .browser = false,
                          .wallets = wallets,
                          .publisher_id = 3,
                          .now_seconds = 1'700'000'040};
  EXPECT_EQ(checks.CheckImpression(backend), InvalidReason::kNone);
  backend.user_agent = "";
  EXPECT_EQ(checks.CheckImpression(backend), InvalidReason::kNone);
}

TEST_F(TrafficChecksTest, ImpressionChecksCanBeTurnedOff) {
  TrafficOptions options;
  options.check_impressions = false;
  TrafficChecks checks(options, CrawlerMatcher::Builtin(), blocklist_.get());
  ImpressionFacts crawler{.user_agent = "curl/8.5.0", .browser = true};
  EXPECT_EQ(checks.CheckImpression(crawler), InvalidReason::kNone);
}

}  // namespace
}  // namespace adserver::events
