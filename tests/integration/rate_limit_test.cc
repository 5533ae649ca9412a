// Per-publisher rate limits over real HTTP (issue 18, item 3): an operator sets
// `rateLimit: {"perSecond", "burst"}` on a publisher; its keys get 429 with Retry-After and the
// spec's error body beyond it, on both variants; null lifts it; bad values are 400s naming the
// field.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "integration/fixture.h"

namespace adserver::testing {
namespace {

using nlohmann::json;

class RateLimitTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fixture_ = new ServingFixture();
    ASSERT_TRUE(fixture_->ok()) << fixture_->error();
  }
  static void TearDownTestSuite() {
    delete fixture_;
    fixture_ = nullptr;
  }
  std::string PublisherPath() {
    return "/admin/v1/publishers/" + std::to_string(fixture_->keys.open_publisher);
  }
  HttpResult Ask(const std::string& path, const std::string& key = "") {
    json body = {{"walletAddresses", {fixture_->wallets.uniswap}}, {"imageFormat", "NO_IMAGE"}};
    return fixture_->Client().Send("POST", path,
                                   {{"Content-Type", "application/json"},
                                    {"x-api-key", key.empty() ? fixture_->keys.open_live : key}},
                                   body.dump());
  }
  static ServingFixture* fixture_;
};

ServingFixture* RateLimitTest::fixture_ = nullptr;

TEST_F(RateLimitTest, RequestsBeyondTheBurstGet429WithRetryAfterOnBothVariants) {
  HttpResult set = fixture_->Admin("PATCH", PublisherPath(),
                                   {{"rateLimit", {{"perSecond", 0.2}, {"burst", 2}}}});
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_EQ(json::parse(set.body)["rateLimit"], (json{{"perSecond", 0.2}, {"burst", 2}}));
  EXPECT_NE(Ask("/v1/ads").status, 429);
  EXPECT_NE(Ask("/api/ads").status, 429);  // one bucket for the publisher's keys
  for (const char* path : {"/v1/ads", "/api/ads"}) {
    HttpResult limited = Ask(path);
    ASSERT_EQ(limited.status, 429) << path << " " << limited.body;
    // 0.2 per second: the next request is 5 s away.
    EXPECT_EQ(limited.Header("Retry-After"), "5") << path;
    json error = json::parse(limited.body);
    EXPECT_EQ(error["error"], "Too many requests");
    ASSERT_EQ(error["details"].size(), 1u);
    EXPECT_EQ(error["details"][0]["field"], "x-api-key");
  }
  // Another publisher's key is served meanwhile.
  for (int i = 0; i < 5; ++i) {
    HttpResult other = Ask("/v1/ads", fixture_->keys.blocking);
    EXPECT_TRUE(other.status == 200 || other.status == 204) << other.status << " " << other.body;
  }
  EXPECT_EQ(Ask("/v1/ads").status, 429);
  // Lifted: the same key is served again at once.
  HttpResult lifted = fixture_->Admin("PATCH", PublisherPath(), {{"rateLimit", nullptr}});
  ASSERT_EQ(lifted.status, 200) << lifted.body;
  EXPECT_TRUE(json::parse(lifted.body)["rateLimit"].is_null());
  for (int i = 0; i < 20; ++i) ASSERT_NE(Ask("/v1/ads").status, 429) << i;
}

TEST_F(RateLimitTest, BadLimitsAreFieldErrors) {
  HttpResult zero = fixture_->Admin("PATCH", PublisherPath(), {{"rateLimit", {{"perSecond", 0}}}});
  ASSERT_EQ(zero.status, 400) << zero.body;
  EXPECT_EQ(json::parse(zero.body)["details"][0]["field"], "rateLimit.perSecond");
  HttpResult burst = fixture_->Admin("PATCH", PublisherPath(),
                                     {{"rateLimit", {{"perSecond", 5}, {"burst", 1.5}}}});
  ASSERT_EQ(burst.status, 400) << burst.body;
  EXPECT_EQ(json::parse(burst.body)["details"][0]["field"], "rateLimit.burst");
  HttpResult missing = fixture_->Admin("PATCH", PublisherPath(), {{"rateLimit", json::object()}});
  ASSERT_EQ(missing.status, 400) << missing.body;
  EXPECT_EQ(json::parse(missing.body)["details"][0]["field"], "rateLimit.perSecond");
  // The default burst is the rate rounded up.
  HttpResult defaulted =
      fixture_->Admin("PATCH", PublisherPath(), {{"rateLimit", {{"perSecond", 2.5}}}});
  ASSERT_EQ(defaulted.status, 200) << defaulted.body;
  EXPECT_EQ(json::parse(defaulted.body)["rateLimit"]["burst"], 3);
  ASSERT_EQ(fixture_->Admin("PATCH", PublisherPath(), {{"rateLimit", nullptr}}).status, 200);
}

TEST_F(RateLimitTest, OnlyOperatorsSetALimit) {
  HttpResult user = fixture_->Admin("POST", "/admin/v1/users",
                                    {{"email", "limits@example.test"},
                                     {"password", "publisher-pass-1"},
                                     {"role", "publisher"},
                                     {"publisherId", fixture_->keys.open_publisher}});
  ASSERT_EQ(user.status, 201) << user.body;
  HttpResult token =
      fixture_->Admin("POST", "/admin/v1/tokens", {{"userId", json::parse(user.body)["id"]}});
  ASSERT_EQ(token.status, 201) << token.body;
  HttpResult patched = fixture_->Client().Send(
      "PATCH", PublisherPath(),
      {{"Authorization", "Bearer " + json::parse(token.body)["token"].get<std::string>()},
       {"Content-Type", "application/json"}},
      json{{"rateLimit", {{"perSecond", 1000}}}}.dump());
  EXPECT_EQ(patched.status, 403) << patched.body;
  EXPECT_TRUE(json::parse(fixture_->Admin("GET", PublisherPath()).body)["rateLimit"].is_null());
}

}  // namespace
}  // namespace adserver::testing
