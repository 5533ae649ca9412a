#include "events/events_service.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "events/click_token.h"
#include "events/decision_id.h"
#include "common/ip_address.h"
#include "common/mutex.h"
#include "store/sqlite/sqlite_events_store.h"
#include "support/temp_dir.h"

namespace adserver::events {
namespace {

using store::ClickRecord;
using store::ClickStatus;

class EventsServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::SqliteEventsStore::Open(dir_.File("adserver.db"));
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    store_ = std::move(opened).value();
  }

  std::unique_ptr<EventsService> Service(EventsOptions options = {}) {
    auto service = EventsService::Create(*store_, *store_, clock_, std::move(options));
    EXPECT_TRUE(service.ok()) << service.status().message();
    return service.ok() ? std::move(service).value() : nullptr;
  }

  ClickRecord Click(const DecisionId& id, ClickStatus status = ClickStatus::kBilled) {
    return ClickRecord{.decision_id = id.bytes,
                       .publisher_id = 1,
                       .ad_unit_id = "top",
                       .campaign_id = 10,
                       .ad_id = 20,
                       .arm = "a",
                       .served_at = clock_.NowSeconds() - 5,
                       .clicked_at = clock_.NowSeconds(),
                       .price = 1'500'000,
                       .person = 99,
                       .status = status};
  }

  testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::SqliteEventsStore> store_;
};

TEST_F(EventsServiceTest, TheFirstValidClickOfADecisionIsBilledAndLaterOnesAreDuplicates) {
  auto service = Service();
  std::vector<ClickRecord> billed;
  service->SetOnBilled([&](const ClickRecord& c) { billed.push_back(c); });
  service->Start();
  DecisionId id = NewDecisionId(clock_.NowMicros() / 1000);
  Result<ClickRecord> first = service->RecordClick(Click(id));
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->status, ClickStatus::kBilled);
  EXPECT_EQ(first->price, 1'500'000);
  EXPECT_GT(first->id, 0);
  Result<ClickRecord> again = service->RecordClick(Click(id));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, ClickStatus::kDuplicate);
  EXPECT_EQ(again->price, 0);
  Result<ClickRecord> expired =
      service->RecordClick(Click(NewDecisionId(1), ClickStatus::kExpired));
  ASSERT_TRUE(expired.ok());
  EXPECT_EQ(expired->status, ClickStatus::kExpired);
  ASSERT_EQ(billed.size(), 1u);
  EXPECT_EQ(billed[0].id, first->id);

  ASSERT_TRUE(service->FlushNow().ok());  // clicks reach the rollups with the next flush
  auto totals = store_->CampaignTotals(10);
  ASSERT_TRUE(totals.ok());
  EXPECT_EQ(totals->clicks, 1);
  EXPECT_EQ(totals->duplicate_clicks, 1);
  EXPECT_EQ(totals->expired_clicks, 1);
  EXPECT_EQ(totals->click_spend, 1'500'000);
  auto listed = store_->ListClicks({.campaign_id = 10});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 3u);
  EXPECT_EQ((*listed)[0].status, ClickStatus::kExpired);  // newest first
  EXPECT_EQ((*listed)[2].id, first->id);
  EXPECT_EQ((*listed)[2].ad_unit_id, "top");
}

TEST_F(EventsServiceTest, ConcurrentClicksOfOneDecisionBillExactlyOnce) {
  auto service = Service({.max_click_batch = 8});
  std::atomic<int> billed{0};
  service->SetOnBilled([&](const ClickRecord&) { ++billed; });
  service->Start();
  DecisionId id = NewDecisionId(1);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        if (service->RecordClick(Click(id)).ok()) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 320);
  EXPECT_EQ(billed.load(), 1);
  ASSERT_TRUE(service->FlushNow().ok());
  auto totals = store_->CampaignTotals(10);
  ASSERT_TRUE(totals.ok());
  EXPECT_EQ(totals->clicks, 1);
  EXPECT_EQ(totals->duplicate_clicks, 319);
}

TEST_F(EventsServiceTest, ClicksAreRefusedBeforeStartAndAfterStop) {
  auto service = Service();
  EXPECT_EQ(service->RecordClick(Click(NewDecisionId(1))).status().code(), Code::kUnavailable);
  service->Start();
  EXPECT_TRUE(service->RecordClick(Click(NewDecisionId(1))).ok());
  service->Stop();
  EXPECT_EQ(service->RecordClick(Click(NewDecisionId(2))).status().code(), Code::kUnavailable);
}

TEST_F(EventsServiceTest, StopWritesTheLastServingCountersAndClicks) {
  auto service = Service({.flush_interval = std::chrono::minutes(10)});
  service->Start();
  for (int i = 0; i < 3; ++i) {
    service->served().Count(
        {.unix_seconds = clock_.NowSeconds(), .publisher_id = 1, .campaign_id = 10, .ad_id = 20},
        ServeOutcome::kFill, 2000);
  }
  ASSERT_TRUE(service->RecordClick(Click(NewDecisionId(1))).ok());
  service->Stop();
  auto totals = store_->CampaignTotals(10);
  ASSERT_TRUE(totals.ok());
  EXPECT_EQ(totals->impressions, 3);
  EXPECT_EQ(totals->impression_spend, 6000);
  EXPECT_EQ(totals->clicks, 1);  // and the last clicks are rolled up
}

TEST_F(EventsServiceTest, SecretsAreMadeOnceAndKeptAcrossRestarts) {
  ClickClaims claims{.decision = NewDecisionId(1), .publisher_id = 1, .campaign_id = 2};
  std::string token;
  uint64_t person = 0;
  Address wallet{};
  wallet.bytes[0] = 1;
  {
    auto first = Service();
    token = SealClick(first->click_keys(), claims);
    person = first->PersonDigest({&wallet, 1});
  }
  auto second = Service();
  EXPECT_EQ(OpenClick(second->click_keys(), token), claims);
  EXPECT_EQ(second->PersonDigest({&wallet, 1}), person);
}

TEST_F(EventsServiceTest, ConfiguredKeysAreUsedInsteadOfTheStoredOne) {
  auto stored = Service();
  auto configured = Service({.keys = "3:" + std::string(64, 'd')});
  ClickClaims claims{.decision = NewDecisionId(1)};
  EXPECT_FALSE(OpenClick(stored->click_keys(), SealClick(configured->click_keys(), claims)));
  EXPECT_EQ(configured->click_keys().active().id, 3);
}

TEST_F(EventsServiceTest, PersonDigestIgnoresOrderAndSeparatesWalletSets) {
  auto service = Service();
  Address a{}, b{}, c{};
  a.bytes[0] = 1;
  b.bytes[0] = 2;
  c.bytes[0] = 3;
  std::vector<Address> ab{a, b}, ba{b, a}, ac{a, c};
  EXPECT_EQ(service->PersonDigest(ab), service->PersonDigest(ba));
  EXPECT_NE(service->PersonDigest(ab), service->PersonDigest(ac));
  EXPECT_NE(service->PersonDigest({&a, 1}), service->PersonDigest({&b, 1}));
}

TEST_F(EventsServiceTest, PruneDropsRowsPastTheirRetention) {
  auto service = Service();
  service->Start();
  ClickRecord old = Click(NewDecisionId(1));
  old.clicked_at = clock_.NowSeconds() - 100 * 86400;
  ASSERT_TRUE(service->RecordClick(old).ok());
  ASSERT_TRUE(service->RecordClick(Click(NewDecisionId(2))).ok());
  ASSERT_TRUE(service->FlushNow().ok());
  auto pruned = store_->Prune({}, clock_.NowSeconds());
  ASSERT_TRUE(pruned.ok());
  EXPECT_GE(*pruned, 1);
  auto listed = store_->ListClicks({});
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 1u);
  // Daily rollups are kept: the campaign's totals still count both clicks.
  EXPECT_EQ(store_->CampaignTotals(10)->clicks, 2);
}

TEST_F(EventsServiceTest, ListingFiltersAndPagesNewestFirst) {
  auto service = Service();
  service->Start();
  for (int i = 0; i < 5; ++i) {
    ClickRecord c = Click(NewDecisionId(i));
    c.campaign_id = i % 2 == 0 ? 10 : 11;
    c.clicked_at = 1000 + i;
    ASSERT_TRUE(service->RecordClick(c).ok());
  }
  auto page = store_->ListClicks({.campaign_id = 10, .limit = 2});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].clicked_at, 1004);
  EXPECT_EQ((*page)[1].clicked_at, 1002);
  auto rest = store_->ListClicks({.campaign_id = 10, .before_id = (*page)[1].id, .limit = 2});
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].clicked_at, 1000);
  auto window = store_->ListClicks({.from = 1001, .to = 1003});
  ASSERT_TRUE(window.ok());
  EXPECT_EQ(window->size(), 2u);
}

// The click redirect hands an events::Click (issue 41 item 4): what it is stored as.
TEST(ClickRecordOfTest, StatusReasonAndAddressFollowTheClick) {
  ClickClaims claims{.decision = NewDecisionId(1'700'000'000'000),
                     .publisher_id = 1,
                     .campaign_id = 10,
                     .ad_id = 20,
                     .served_at = 1'700'000'000,
                     .price = 1'500'000,
                     .person = 99,
                     .earlier_variant = true,
                     .arm = "b",
                     .ad_unit_id = "top"};
  store::ClickRecord valid = ClickRecordOf(
      {.claims = claims, .clicked_at = 1'700'000'010, .ip = ParseIp("192.0.2.17")});
  EXPECT_EQ(valid.status, store::ClickStatus::kBilled);
  EXPECT_EQ(valid.reason, "");
  EXPECT_EQ(valid.ip, "192.0.2.0");  // only the /24 is kept
  EXPECT_EQ(valid.decision_id, claims.decision.bytes);
  EXPECT_EQ(valid.price, 1'500'000);
  EXPECT_EQ(valid.served_at, 1'700'000'000);
  EXPECT_EQ(valid.clicked_at, 1'700'000'010);
  EXPECT_TRUE(valid.earlier_variant);
  EXPECT_EQ(valid.arm, "b");
  EXPECT_EQ(valid.ad_unit_id, "top");
  EXPECT_EQ(valid.person, 99u);

  store::ClickRecord invalid =
      ClickRecordOf({.claims = claims, .clicked_at = 1, .invalid = InvalidReason::kCrawler});
  EXPECT_EQ(invalid.status, store::ClickStatus::kInvalid);
  EXPECT_EQ(invalid.reason, "crawler");
  EXPECT_EQ(invalid.ip, "");  // unknown

  // An expired click is recorded as expired whatever a check said.
  store::ClickRecord expired = ClickRecordOf(
      {.claims = claims, .clicked_at = 1, .expired = true, .invalid = InvalidReason::kCrawler});
  EXPECT_EQ(expired.status, store::ClickStatus::kExpired);
  EXPECT_EQ(expired.reason, "");
}

class ClickServiceTest : public EventsServiceTest {};

TEST_F(ClickServiceTest, AClickFromTheRedirectIsStoredBeforeDoneRuns) {
  auto service = Service();
  std::vector<ClickRecord> billed;
  service->SetOnBilled([&](const ClickRecord& c) { billed.push_back(c); });
  service->Start();
  Mutex mu;
  CondVar cv;
  std::vector<Status> done;
  ClickClaims claims{.decision = NewDecisionId(clock_.NowMicros() / 1000),
                     .publisher_id = 1,
                     .campaign_id = 10,
                     .ad_id = 20,
                     .served_at = clock_.NowSeconds(),
                     .price = 700};
  for (int i = 0; i < 2; ++i) {
    service->RecordClickAsync(events::Click{.claims = claims, .clicked_at = clock_.NowSeconds()},
                              [&](Status s) {
                                MutexLock lock(mu);
                                done.push_back(std::move(s));
                                cv.NotifyOne();
                              });
    MutexLock lock(mu);
    cv.Wait(mu, [&]() ADS_REQUIRES(mu) { return done.size() == static_cast<size_t>(i + 1); });
  }
  EXPECT_TRUE(done[0].ok()) << done[0].message();
  EXPECT_TRUE(done[1].ok()) << done[1].message();
  ASSERT_EQ(billed.size(), 1u);  // the second click on the decision is a duplicate
  EXPECT_EQ(billed[0].price, 700);
  service->Stop();

  // A stopped service refuses at once, with the reason.
  Status refused;
  service->RecordClickAsync(events::Click{.claims = claims}, [&](Status s) { refused = std::move(s); });
  EXPECT_EQ(refused.code(), Code::kUnavailable);
}

}  // namespace
}  // namespace adserver::events
