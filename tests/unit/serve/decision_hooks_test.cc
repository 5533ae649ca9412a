// Ad serving with the decision engine's live state (issue 4): billing of impressions served by
// live keys, test keys never billed, frequency caps, and the explain header's access rules.

#include "serve/decision_hooks.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/crypto.h"
#include "common/published.h"
#include "serve/ad_handler.h"

namespace adserver::serve {
namespace {

const std::string kLiveKey = "spk_" + std::string(30, 'a');
const std::string kTestKey = "spk_" + std::string(30, 'b');
constexpr char kA[] = "0x00000000000000000000000000000000000000aa";
constexpr char kAdminToken[] = "admin-token-0123456789";
const FakeClock kClock;

std::shared_ptr<decision::Catalog> MakeCatalog() {
  auto catalog = std::make_shared<decision::Catalog>();
  decision::Publisher pub;
  pub.id = 1;
  pub.name = "Pub";
  catalog->publishers = {pub};
  catalog->api_keys = {
      decision::ApiKey{.id = 10, .publisher = 0, .hash = Sha256(kLiveKey), .test = false},
      decision::ApiKey{.id = 11, .publisher = 0, .hash = Sha256(kTestKey), .test = true}};
  catalog->communities = {decision::Community{.id = 1, .name = "C", .logo_url = "https://l"}};
  decision::Campaign c;
  c.id = 100;
  c.id_str = "100";
  c.community = 0;
  c.community_id = 1;
  c.pricing_model = PricingModel::kCpm;
  c.bid_micros = 2'000'000;  // 2000 micros an impression
  c.value_micros = 2000;
  c.total_budget_micros = 6000;
  c.pacing = decision::PacingMode::kAsap;
  c.frequency_cap_count = 2;
  c.frequency_cap_hours = 24;
  c.target_projects = {7};
  catalog->campaigns = {c};
  decision::Ad ad;
  ad.id = 1000;
  ad.id_str = "1000";
  ad.campaign = 0;
  ad.headline = "H";
  ad.content = "C";
  ad.cta_url = "https://x";
  ad.cta_label = "Go";
  ad.images = {"https://i/l.png", "", ""};
  ad.content_chars = 1;
  catalog->ads = {ad};
  catalog->projects[7] = decision::Project{.id = 7};
  catalog->BuildAdLists();
  catalog->BuildIndexes();
  return catalog;
}

std::shared_ptr<decision::ActivityIndex> MakeActivity() {
  auto activity = std::make_shared<decision::ActivityIndex>();
  activity->Add(
      *ParseAddress(kA),
      decision::Interaction{.project_id = 7,
                            .chain_id = 1,
                            .last_seen_day = static_cast<uint32_t>(DayOf(kClock.NowSeconds())),
                            .count = 1});
  activity->Finalize();
  return activity;
}

class DecisionHooksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(InitCrypto());
    hooks_.live = &live_;
    hooks_.admin_token_hash = Sha256(kAdminToken);
    handler_.SetDecisionHooks(&hooks_);
  }

  http::Response Post(const std::string& key,
                      std::vector<std::pair<std::string, std::string>> extra = {}) {
    headers_ = {{"Content-Type", "application/json"}, {"x-api-key", key}};
    for (auto& h : extra) headers_.push_back(std::move(h));
    body_ = std::string(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"LANDSCAPE"})";
    http::Request r;
    r.method = http::Method::kPost;
    r.target = "/v1/ads";
    r.path = r.target;
    for (const auto& [n, v] : headers_) r.headers.push_back({n, v});
    r.body = body_;
    return handler_.HandleWith(r, Variant::kCurrent, catalog_.get(), activity_.get(),
                               kClock.NowSeconds(), rng_);
  }

  static std::optional<std::string> HeaderOf(const http::Response& r, std::string_view name) {
    for (const auto& [n, v] : r.Headers()) {
      if (n == name) return std::string(v);
    }
    return std::nullopt;
  }

  std::shared_ptr<decision::Catalog> catalog_ = MakeCatalog();
  std::shared_ptr<decision::ActivityIndex> activity_ = MakeActivity();
  Published<decision::Catalog> catalogs_;
  Published<decision::ActivityIndex> activities_;
  ServeOptions options_;
  AdHandler handler_{catalogs_, activities_, kClock, options_};
  decision::LiveState live_{
      decision::LiveStateOptions{.ledger_capacity = 64, .frequency_capacity = 64}};
  DecisionHooks hooks_;
  decision::Rng rng_{1};
  std::vector<std::pair<std::string, std::string>> headers_;
  std::string body_;
};

TEST_F(DecisionHooksTest, LiveImpressionsAreBilledAndCappedPerPerson) {
  EXPECT_EQ(Post(kLiveKey).status, 200);
  EXPECT_EQ(Post(kLiveKey).status, 200);
  EXPECT_EQ(Post(kLiveKey).status, 204);  // frequency cap of 2 reached
  auto v = live_.ledger.Read(100, kClock.NowSeconds());
  EXPECT_EQ(v.impressions, 2);
  EXPECT_EQ(v.total_spend, 4000);
}

TEST_F(DecisionHooksTest, TestKeysNeverTouchBudgetsOrCaps) {
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Post(kTestKey).status, 200);
  auto v = live_.ledger.Read(100, kClock.NowSeconds());
  EXPECT_EQ(v.impressions, 0);
  EXPECT_EQ(v.total_spend, 0);
  EXPECT_EQ(Post(kLiveKey).status, 200);  // the cap was not consumed by test traffic
}

TEST_F(DecisionHooksTest, LiveKeyWithoutAdminTokenGetsNoExplanation) {
  auto r = Post(kLiveKey, {{"X-Adserver-Explain", "1"}});
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(HeaderOf(r, "X-Adserver-Explain"));
  auto wrong = Post(kLiveKey, {{"X-Adserver-Explain", "1"}, {"Authorization", "Bearer nope"}});
  EXPECT_FALSE(HeaderOf(wrong, "X-Adserver-Explain"));
}

TEST_F(DecisionHooksTest, LiveKeyWithAdminTokenGetsTheExplanationOfTheRealDecision) {
  auto r = Post(kLiveKey, {{"X-Adserver-Explain", "1"},
                           {"Authorization", std::string("Bearer ") + kAdminToken}});
  EXPECT_EQ(r.status, 200);
  auto explain = HeaderOf(r, "X-Adserver-Explain");
  ASSERT_TRUE(explain);
  EXPECT_EQ(*explain, R"({"arm":"","winner":{"campaignId":"100","adId":"1000"},"candidates":[)"
                      R"({"campaignId":"100","rule":"eligible","valueMicros":2000,"relevance":1,)"
                      R"("pacingFactor":1,"score":2000}],"unmatched":0})");
  EXPECT_EQ(live_.ledger.Read(100, kClock.NowSeconds()).impressions, 1);  // still billed
}

TEST_F(DecisionHooksTest, TestKeyExplainsWhatALiveKeyWouldGetWithoutBilling) {
  Post(kLiveKey);
  Post(kLiveKey);  // capped now
  auto r = Post(kTestKey, {{"X-Adserver-Explain", "1"}});
  EXPECT_EQ(r.status, 200);  // test keys still get a sample ad
  auto explain = HeaderOf(r, "X-Adserver-Explain");
  ASSERT_TRUE(explain);
  EXPECT_NE(explain->find(R"("winner":null)"), std::string::npos) << *explain;
  EXPECT_NE(explain->find(R"("rule":"frequency_cap")"), std::string::npos) << *explain;
  EXPECT_EQ(live_.ledger.Read(100, kClock.NowSeconds()).impressions, 2);
}

TEST_F(DecisionHooksTest, NoExplanationWithoutTheRequestHeader) {
  auto r = Post(kTestKey);
  EXPECT_FALSE(HeaderOf(r, "X-Adserver-Explain"));
}

// Issue 39: a test key is the publisher's; its explanation names the winner and each
// candidate's rule, and only the operator's token shows advertisers' values.
TEST(ExplainScopeTest, TestKeysSeeRulesAndTheOperatorSeesValues) {
  DecisionHooks hooks;
  hooks.admin_token_hash = Sha256(kAdminToken);
  const std::string bearer = std::string("Bearer ") + kAdminToken;
  auto request = [](std::vector<http::Header> headers) {
    http::Request r;
    r.headers = std::move(headers);
    return r;
  };
  const http::Header ask{"X-Adserver-Explain", "1"};
  const http::Header token{"Authorization", bearer};
  const http::Header wrong{"Authorization", "Bearer not-the-admin-token"};
  EXPECT_EQ(ExplainAllowed(hooks, request({}), true), ExplainScope::kNone);
  EXPECT_EQ(ExplainAllowed(hooks, request({token}), true), ExplainScope::kNone);
  EXPECT_EQ(ExplainAllowed(hooks, request({ask}), false), ExplainScope::kNone);
  EXPECT_EQ(ExplainAllowed(hooks, request({ask, wrong}), false), ExplainScope::kNone);
  EXPECT_EQ(ExplainAllowed(hooks, request({ask}), true), ExplainScope::kPublisher);
  EXPECT_EQ(ExplainAllowed(hooks, request({ask, wrong}), true), ExplainScope::kPublisher);
  EXPECT_EQ(ExplainAllowed(hooks, request({ask, token}), false), ExplainScope::kOperator);
  EXPECT_EQ(ExplainAllowed(hooks, request({ask, token}), true), ExplainScope::kOperator);
  hooks.admin_token_hash.reset();
  EXPECT_EQ(ExplainAllowed(hooks, request({ask, token}), true), ExplainScope::kPublisher);

  decision::Explanation e;
  e.winner_campaign_id = 7;
  e.winner_ad_id = 70;
  e.candidates = {{.campaign_id = 7,
                   .rule = decision::DropRule::kNone,
                   .value_micros = 12000,
                   .relevance = 1,
                   .pacing_factor = 0.5,
                   .score = 6000},
                  {.campaign_id = 8, .rule = decision::DropRule::kNoMatchingActivity}};
  std::string publisher = ExplanationJson(e, false, false);
  EXPECT_EQ(publisher, R"({"arm":"","winner":{"campaignId":"7","adId":"70"},"candidates":[)"
                       R"({"campaignId":"7","rule":")" +
                           std::string(decision::DropRuleName(decision::DropRule::kNone)) +
                           R"("}],"unmatched":1})");
  std::string operator_view = ExplanationJson(e, false, true);
  EXPECT_NE(operator_view.find(R"("valueMicros":12000)"), std::string::npos) << operator_view;
  EXPECT_NE(operator_view.find(R"("pacingFactor":0.5)"), std::string::npos) << operator_view;
  EXPECT_EQ(operator_view.find("meanValueMicros"), std::string::npos);  // a CPM value: no rate

  // A CPC candidate valued at a draw (issue 36): the mean, the posterior and its counts too,
  // for the operator only.
  decision::CandidateExplanation sampled{.campaign_id = 9,
                                         .rule = decision::DropRule::kNone,
                                         .value_micros = 1500,
                                         .mean_value_micros = 1000,
                                         .sampled = true,
                                         .placement_factor = 1.25,
                                         .relevance = 1,
                                         .pacing_factor = 1,
                                         .score = 1500};
  sampled.rate = {.learned = true,
                  .prior_mean = 0.01,
                  .prior_weight = 50,
                  .successes = 3,
                  .trials = 200,
                  .mean = 0.014};
  e.candidates = {sampled};
  operator_view = ExplanationJson(e, false, true);
  // Per-placement learning (issue 36 item 5): the factor of this publisher the draw took.
  EXPECT_NE(operator_view.find(R"("valueMicros":1500,"meanValueMicros":1000,"sampled":true,)"
                               R"("placementFactor":1.25,)"
                               R"("rate":{"mean":0.014,"priorMean":0.01,)"
                               R"("priorWeight":50,"events":3,"impressions":200})"),
            std::string::npos)
      << operator_view;
  EXPECT_EQ(ExplanationJson(e, false, false).find("rate"), std::string::npos);
}

}  // namespace
}  // namespace adserver::serve
