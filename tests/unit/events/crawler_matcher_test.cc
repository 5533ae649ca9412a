#include "events/crawler_matcher.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace adserver::events {
namespace {

TEST(CrawlerMatcherTest, BuiltinListMatchesEveryExampleOfThePackage) {
  // third_party/crawler-user-agents/crawler-user-agents.json: each entry's `instances` are
  // user agents its pattern is meant to catch.
  std::ifstream in(ADSERVER_CRAWLER_JSON);
  ASSERT_TRUE(in) << ADSERVER_CRAWLER_JSON;
  nlohmann::json list = nlohmann::json::parse(in);
  const CrawlerMatcher& matcher = CrawlerMatcher::Builtin();
  EXPECT_EQ(matcher.pattern_count(), list.size());
  size_t examples = 0;
  for (const nlohmann::json& entry : list) {
    for (const nlohmann::json& instance : entry.value("instances", nlohmann::json::array())) {
      ++examples;
      EXPECT_TRUE(matcher.Matches(instance.get<std::string>()))
          << entry["pattern"] << " / " << instance;
    }
  }
  EXPECT_GT(examples, 1000u);
}

TEST(CrawlerMatcherTest, BuiltinListLetsBrowsersThrough) {
  const CrawlerMatcher& matcher = CrawlerMatcher::Builtin();
  for (const char* browser : {
           "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
           "Chrome/124.0.0.0 Safari/537.36",
           "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) "
           "Version/17.4 Safari/605.1.15",
           "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
           "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, "
           "like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
       }) {
    EXPECT_FALSE(matcher.Matches(browser)) << browser;
  }
  EXPECT_TRUE(matcher.Matches("curl/8.5.0"));
  EXPECT_TRUE(matcher.Matches("python-requests/2.31.0"));
  EXPECT_TRUE(
      matcher.Matches("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"));
}

TEST(CrawlerMatcherTest, CompilesAGivenList) {
  Result<CrawlerMatcher> matcher = CrawlerMatcher::Compile("FooBot\\/\n\n[bB]ar[sS]pider\r\n");
  ASSERT_TRUE(matcher.ok()) << matcher.status().message();
  EXPECT_EQ(matcher->pattern_count(), 2u);
  EXPECT_TRUE(matcher->Matches("Mozilla/5.0 (compatible; FooBot/1.0)"));
  EXPECT_TRUE(matcher->Matches("barSpider"));
  EXPECT_FALSE(matcher->Matches("FooBot 1.0"));
  EXPECT_FALSE(matcher->Matches(""));
}

TEST(CrawlerMatcherTest, AnEmptyListMatchesNothing) {
  Result<CrawlerMatcher> matcher = CrawlerMatcher::Compile("");
  ASSERT_TRUE(matcher.ok());
  EXPECT_FALSE(matcher->Matches("anything"));
  EXPECT_FALSE(matcher->Matches(""));
}

TEST(CrawlerMatcherTest, RejectsAPatternThatDoesNotCompile) {
  Result<CrawlerMatcher> matcher = CrawlerMatcher::Compile("ok\nbad(\n");
  ASSERT_FALSE(matcher.ok());
  EXPECT_EQ(matcher.status().details().at(0).field, "bad(");
}

}  // namespace
}  // namespace adserver::events
