#include "events/crawler_matcher.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
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

// The per-thread memo answers a repeated user agent with its own list's verdict: two lists
// seen in turn on one thread, many user agents (more than the memo's slots, so slots are
// reused), every verdict equal to the uncached one, repeats included.
TEST(CrawlerMatcherTest, RemembersVerdictsPerListAndUserAgent) {
  Result<CrawlerMatcher> foo = CrawlerMatcher::Compile("FooBot");
  Result<CrawlerMatcher> bar = CrawlerMatcher::Compile("BarBot");
  ASSERT_TRUE(foo.ok() && bar.ok());
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 300; ++i) {
      std::string agent = "Mozilla/5.0 (" + std::to_string(i) + ")";
      if (i % 3 == 0) agent += " FooBot";
      if (i % 5 == 0) agent += " BarBot";
      if (i % 7 == 0) agent += std::string(300, 'x');  // too long to remember
      EXPECT_EQ(foo->Matches(agent), i % 3 == 0) << agent;
      EXPECT_EQ(bar->Matches(agent), i % 5 == 0) << agent;
      EXPECT_EQ(foo->Matches(agent), foo->MatchesUncached(agent));
    }
  }
  // A copy shares its list and so its verdicts; a list compiled again from the same text is
  // another list with the same verdicts.
  CrawlerMatcher copy = *foo;
  EXPECT_TRUE(copy.Matches("x FooBot"));
  Result<CrawlerMatcher> again = CrawlerMatcher::Compile("FooBot");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->Matches("x FooBot"));
  EXPECT_FALSE(again->Matches("x BarBot"));
}

TEST(CrawlerMatcherTest, RejectsAPatternThatDoesNotCompile) {
  Result<CrawlerMatcher> matcher = CrawlerMatcher::Compile("ok\nbad(\n");
  ASSERT_FALSE(matcher.ok());
  EXPECT_EQ(matcher.status().details().at(0).field, "bad(");
}

}  // namespace
}  // namespace adserver::events
