// The ad pipeline over its ports (serve/ad_pipeline.h, issue 41 item 4): what each port is asked,
// in which order, and what the answer becomes, with recording fakes in place of identity, the
// live state and the events.

#include "serve/ad_pipeline.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/crypto.h"
#include "decision/live_state.h"

namespace adserver::serve {
namespace {

constexpr char kA[] = "0x00000000000000000000000000000000000000aa";
constexpr int64_t kNow = 1'700'000'000;

std::shared_ptr<decision::Catalog> MakeCatalog() {
  auto catalog = std::make_shared<decision::Catalog>();
  decision::Publisher pub;
  pub.id = 1;
  pub.name = "Pub";
  pub.ab_arms = {"a", "b"};
  catalog->publishers = {pub};
  catalog->api_keys = {decision::ApiKey{.id = 10, .publisher = 0, .test = false},
                       decision::ApiKey{.id = 11, .publisher = 0, .test = true}};
  catalog->communities = {decision::Community{.id = 1, .name = "C", .logo_url = "https://l"}};
  decision::Campaign c;
  c.id = 100;
  c.id_str = "100";
  c.community = 0;
  c.community_id = 1;
  c.pricing_model = PricingModel::kCpm;
  c.bid_micros = 2'000'000;  // 2000 micros an impression
  c.value_micros = 2000;
  c.pacing = decision::PacingMode::kAsap;
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
  activity->Add(*ParseAddress(kA),
                decision::Interaction{.project_id = 7,
                                      .chain_id = 1,
                                      .last_seen_day = static_cast<uint32_t>(DayOf(kNow)),
                                      .count = 1});
  activity->Finalize();
  return activity;
}

// Every call the pipeline makes, in order.
struct Calls {
  std::vector<std::string> log;
};

class RecordingIdentity final : public IdentityPort {
 public:
  explicit RecordingIdentity(Calls& calls) : calls_(calls) {}
  IdentityOutcome Resolve(const http::Request&, AdRequest& request, bool test_key,
                          int64_t) const override {
    calls_.log.push_back(std::string("identity consent=") + (request.cookie_consent ? "1" : "0") +
                         " test=" + (test_key ? "1" : "0"));
    return outcome;
  }
  IdentityOutcome outcome;

 private:
  Calls& calls_;
};

class RecordingBudgets final : public BudgetGate {
 public:
  explicit RecordingBudgets(Calls& calls) : calls_(calls) {}
  void Prepare(decision::DecisionRequest& request) const override {
    calls_.log.push_back("prepare unit=" + std::string(request.ad_unit_id.value_or("-")));
  }
  bool Authorize(const decision::Decision& d) const override {
    calls_.log.push_back("authorize " + std::to_string(d.campaign->id));
    return authorize;
  }
  void Record(const decision::Decision& d, std::span<const Address> wallets,
              int64_t now) const override {
    calls_.log.push_back("record " + std::to_string(d.campaign->id) + " wallets=" +
                         std::to_string(wallets.size()) + " at=" + std::to_string(now));
  }
  ExplainScope Explain(const http::Request&, bool) const override { return explain; }
  bool authorize = true;
  ExplainScope explain = ExplainScope::kNone;

 private:
  Calls& calls_;
};

class RecordingImpressions final : public ImpressionRecorder {
 public:
  explicit RecordingImpressions(Calls& calls) : calls_(calls) {}
  events::InvalidReason Check(const http::Request&, std::span<const Address> wallets,
                              int64_t publisher_id, int64_t) const override {
    calls_.log.push_back("check publisher=" + std::to_string(publisher_id) +
                         " wallets=" + std::to_string(wallets.size()));
    return invalid;
  }
  std::string Seal(const ServedAd& ad) const override {
    calls_.log.push_back("seal " + std::to_string(ad.decision.ad->id) +
                         " invalid=" + std::string(events::InvalidReasonName(ad.invalid)) +
                         " at=" + std::to_string(ad.now_seconds));
    return "https://ads.example/v1/click/token";
  }
  void Count(const events::ServedKey& key, events::ServeOutcome outcome,
             const ServedInfo& served) const override {
    counted.push_back({key.campaign_id, static_cast<int>(outcome), served.spend,
                       std::string(key.ad_unit_id), std::string(key.arm)});
  }
  events::InvalidReason invalid = events::InvalidReason::kNone;
  struct Counted {
    int64_t campaign_id;
    int outcome;
    Micros spend;
    std::string ad_unit;
    std::string arm;
  };
  mutable std::vector<Counted> counted;

 private:
  Calls& calls_;
};

class AdPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(InitCrypto());
    http_.method = http::Method::kPost;
    http_.target = http_.path = "/v1/ads";
  }

  AdPorts Ports() {
    return {.identity = &identity_, .budgets = &budgets_, .impressions = &impressions_};
  }

  AdInput Input(bool test_key) {
    return {.http = http_,
            .key = catalog_->api_keys[test_key ? 1 : 0],
            .publisher = catalog_->publishers[0],
            .catalog = *catalog_,
            .activity = *activity_,
            .now_micros = kNow * 1'000'000 + 250'000,
            .now_seconds = kNow,
            .rng = rng_};
  }

  AdRequest Request(Variant variant = Variant::kCurrent) {
    AdRequest request;
    request.variant = variant;
    request.wallets = {*ParseAddress(kA)};
    request.wallet_texts = {WalletText(std::string_view(kA))};
    request.wallets_present = true;
    request.ad_unit_id = "top";
    return request;
  }

  std::shared_ptr<decision::Catalog> catalog_ = MakeCatalog();
  std::shared_ptr<decision::ActivityIndex> activity_ = MakeActivity();
  http::Request http_;
  decision::Rng rng_{1};
  std::atomic<uint64_t> samples_{0};
  Calls calls_;
  RecordingIdentity identity_{calls_};
  RecordingBudgets budgets_{calls_};
  RecordingImpressions impressions_{calls_};
};

TEST_F(AdPipelineTest, NoOpPortsServeTheAdWithItsOwnUrl) {
  AdPipeline pipeline(AdPorts{}, 42, samples_);
  AdRequest request = Request();
  AdAnswer answer = pipeline.Run(Input(false), request);
  ASSERT_EQ(answer.response.status, 200);
  EXPECT_NE(answer.response.body.find(R"("ctaUrl":"https://x")"), std::string::npos);
  EXPECT_EQ(answer.no_fill, NoFillReason::kNone);
  EXPECT_EQ(answer.served.campaign_id, 100);
  EXPECT_EQ(answer.served.ad_id, 1000);
  EXPECT_EQ(answer.served.spend, 2000);
  // Counting with no events does nothing (and does not crash).
  pipeline.Count(Input(false), Variant::kCurrent, request.ad_unit(), 200, answer.served);
}

TEST_F(AdPipelineTest, LiveKeyAsksEveryPortInOrderAndLinksThroughTheClickUrl) {
  AdPipeline pipeline(Ports(), 42, samples_);
  AdRequest request = Request();
  AdAnswer answer = pipeline.Run(Input(false), request);
  ASSERT_EQ(answer.response.status, 200);
  EXPECT_NE(answer.response.body.find(R"("ctaUrl":"https://ads.example/v1/click/token")"),
            std::string::npos);
  EXPECT_EQ(calls_.log, (std::vector<std::string>{
                            "identity consent=0 test=0",
                            "prepare unit=top",
                            "check publisher=1 wallets=1",
                            "authorize 100",
                            "seal 1000 invalid= at=1700000000",
                            "record 100 wallets=1 at=1700000000",
                        }));
  EXPECT_EQ(answer.served.spend, 2000);
  EXPECT_EQ(answer.served.invalid, events::InvalidReason::kNone);
}

TEST_F(AdPipelineTest, InvalidImpressionIsAnsweredButNeitherAuthorizedNorBilled) {
  impressions_.invalid = events::InvalidReason::kCrawler;
  AdPipeline pipeline(Ports(), 42, samples_);
  AdRequest request = Request();
  AdAnswer answer = pipeline.Run(Input(false), request);
  ASSERT_EQ(answer.response.status, 200);
  EXPECT_EQ(calls_.log, (std::vector<std::string>{
                            "identity consent=0 test=0",
                            "prepare unit=top",
                            "check publisher=1 wallets=1",
                            "seal 1000 invalid=crawler at=1700000000",
                        }));
  EXPECT_EQ(answer.served.campaign_id, 100);
  EXPECT_EQ(answer.served.spend, 0);
  EXPECT_EQ(answer.served.invalid, events::InvalidReason::kCrawler);
}

TEST_F(AdPipelineTest, RefusedBudgetIsNoFillWithNothingSealedOrBilled) {
  budgets_.authorize = false;
  AdPipeline pipeline(Ports(), 42, samples_);
  AdRequest request = Request();
  AdAnswer answer = pipeline.Run(Input(false), request);
  EXPECT_EQ(answer.response.status, 204);
  EXPECT_EQ(answer.no_fill, NoFillReason::kNoEligibleAd);
  EXPECT_EQ(answer.served.campaign_id, 0);
  EXPECT_EQ(calls_.log.back(), "authorize 100");

  // The earlier variant says it with its 404, echoing the bound localId.
  calls_.log.clear();
  request = Request(Variant::kEarlier);
  request.bound_local_id = "lid";
  answer = pipeline.Run(Input(false), request);
  EXPECT_EQ(answer.response.status, 404);
  EXPECT_NE(answer.response.body.find(R"("localId":"lid")"), std::string::npos);
}

TEST_F(AdPipelineTest, TestKeyGetsSamplesWithoutEventsOrBilling) {
  AdPipeline pipeline(Ports(), 42, samples_);
  AdRequest request = Request();
  AdAnswer answer = pipeline.Run(Input(true), request);
  ASSERT_EQ(answer.response.status, 200);
  EXPECT_NE(answer.response.body.find(R"("ctaUrl":"https://x")"), std::string::npos);
  EXPECT_EQ(calls_.log, std::vector<std::string>{"identity consent=0 test=1"});
  EXPECT_EQ(answer.served.campaign_id, 0);
  EXPECT_EQ(samples_.load(), 1u);
}

TEST_F(AdPipelineTest, TestKeyExplanationReplaysTheLiveDecision) {
  budgets_.explain = ExplainScope::kPublisher;
  AdPipeline pipeline(Ports(), 42, samples_);
  AdRequest request = Request();
  AdAnswer answer = pipeline.Run(Input(true), request);
  ASSERT_EQ(answer.response.status, 200);
  EXPECT_EQ(calls_.log,
            (std::vector<std::string>{"identity consent=0 test=1", "prepare unit=top"}));
  bool explained = false;
  for (const auto& [name, value] : answer.response.Headers()) {
    if (name == kExplainHeader) explained = value.find("\"winner\"") != std::string_view::npos;
  }
  EXPECT_TRUE(explained);
}

TEST_F(AdPipelineTest, IdentityDecidesNoFillAndSetsCookies) {
  identity_.outcome.no_fill = true;
  AdPipeline pipeline(Ports(), 42, samples_);
  AdRequest request = Request();
  AdAnswer answer = pipeline.Run(Input(false), request);
  EXPECT_EQ(answer.response.status, 204);
  EXPECT_EQ(answer.no_fill, NoFillReason::kNoIdentity);
  EXPECT_EQ(calls_.log.size(), 1u);  // nothing decided

  identity_.outcome = {.set_cookies = {"c=1", "c=1; Partitioned"}};
  answer = pipeline.Run(Input(false), request);
  ASSERT_EQ(answer.response.status, 200);
  std::vector<std::string> cookies;
  for (const auto& [name, value] : answer.response.Headers()) {
    if (name == "Set-Cookie") cookies.emplace_back(value);
  }
  EXPECT_EQ(cookies, (std::vector<std::string>{"c=1", "c=1; Partitioned"}));
}

TEST_F(AdPipelineTest, ConsentFromAnUnlistedOriginIsDropped) {
  AdPipeline pipeline(Ports(), 42, samples_);
  http_.headers.push_back({"Origin", "https://elsewhere.example"});
  AdRequest request = Request();
  request.cookie_consent = true;
  pipeline.Run(Input(false), request);
  EXPECT_EQ(calls_.log.front(), "identity consent=0 test=0");

  // A publisher listing its origins got past AdHandler's Origin check: consent stands.
  catalog_->publishers[0].allowed_origins = {"https://pub.example"};
  calls_.log.clear();
  request = Request();
  request.cookie_consent = true;
  pipeline.Run(Input(false), request);
  EXPECT_EQ(calls_.log.front(), "identity consent=1 test=0");
}

TEST_F(AdPipelineTest, NoWalletsAfterIdentityIsTheVariantsError) {
  AdPipeline pipeline(Ports(), 42, samples_);
  AdRequest request = Request();
  request.wallets.clear();
  request.wallet_texts.clear();
  EXPECT_EQ(pipeline.Run(Input(false), request).response.status, 400);
  request = Request(Variant::kEarlier);
  request.wallets.clear();
  request.wallet_texts.clear();
  request.local_id = "unknown";
  AdAnswer answer = pipeline.Run(Input(false), request);
  EXPECT_EQ(answer.response.status, 404);
  EXPECT_NE(answer.response.body.find("WALLET_CACHE_VOID"), std::string::npos);
}

TEST_F(AdPipelineTest, CountNamesTheOutcomeArmAndAdUnit) {
  AdPipeline pipeline(Ports(), 42, samples_);
  ServedInfo served{.campaign_id = 100, .ad_id = 1000, .spend = 2000};
  pipeline.Count(Input(false), Variant::kCurrent, "top", 200, served);
  pipeline.Count(Input(false), Variant::kCurrent, "top", 204, {});
  pipeline.Count(Input(false), Variant::kEarlier, std::nullopt, 404, {});
  pipeline.Count(Input(false), Variant::kCurrent, std::nullopt, 404, {});
  pipeline.Count(Input(false), Variant::kCurrent, std::nullopt, 400, {});
  const auto& c = impressions_.counted;
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c[0].outcome, static_cast<int>(events::ServeOutcome::kFill));
  EXPECT_EQ(c[0].campaign_id, 100);
  EXPECT_EQ(c[0].spend, 2000);
  EXPECT_EQ(c[0].ad_unit, "top");
  EXPECT_EQ(c[0].arm, decision::ArmFor(catalog_->publishers[0], "top"));
  EXPECT_FALSE(c[0].arm.empty());
  EXPECT_EQ(c[1].outcome, static_cast<int>(events::ServeOutcome::kNoFill));
  EXPECT_EQ(c[2].outcome, static_cast<int>(events::ServeOutcome::kNoFill));  // earlier 404
  EXPECT_EQ(c[3].outcome, static_cast<int>(events::ServeOutcome::kError));   // current 404
  EXPECT_EQ(c[4].outcome, static_cast<int>(events::ServeOutcome::kError));
  EXPECT_EQ(c[4].arm, "");  // no ad unit, no arm
}

}  // namespace
}  // namespace adserver::serve
