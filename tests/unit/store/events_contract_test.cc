// The EventsStore contract (issues 15 and 17): the SQLite and PostgreSQL adapters run the same
// SQL (store/sql/sql_events) through the same cases: clicks billed once per decision, rolled up
// once through the mark, conversions deduplicated and reverted, totals and counters, pruning.
// Then what cluster mode adds: several adapter instances ("nodes") on one database, writing at
// the same time, bill a decision once and add their rollups up exactly. PostgreSQL cases run on
// a database of their own (skipped by hand outside CTest, a failure with
// ADSERVER_REQUIRE_POSTGRES=1).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <latch>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/postgres/postgres_events_store.h"
#include "store/postgres/postgres_report_store.h"
#include "store/sqlite/sqlite_events_store.h"
#include "store/sqlite/sqlite_report_store.h"
#include "support/faulty_stores.h"
#include "support/postgres/test_database.h"
#include "support/temp_dir.h"

namespace adserver::store {
namespace {

constexpr int64_t kT = 1'800'000'000;

class SqliteEvents {
 public:
  static constexpr const char* kName = "sqlite";
  std::string Unavailable() const { return ""; }
  std::string Broken() const { return ""; }
  Result<std::unique_ptr<EventsStore>> Events() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteEventsStore> s,
                         SqliteEventsStore::Open(dir_.File("adserver.db")));
    return std::unique_ptr<EventsStore>(std::move(s));
  }
  Result<std::unique_ptr<ReportStore>> Reports() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<SqliteReportStore> s,
                         SqliteReportStore::Open(dir_.File("adserver.db")));
    return std::unique_ptr<ReportStore>(std::move(s));
  }

 private:
  adserver::testing::TempDir dir_;
};

class PostgresEvents {
 public:
  static constexpr const char* kName = "postgres";
  std::string Unavailable() const { return db_.skip_reason(); }
  std::string Broken() const { return db_.error(); }
  Result<std::unique_ptr<EventsStore>> Events() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<PostgresEventsStore> s,
                         PostgresEventsStore::Open(db_.url()));
    return std::unique_ptr<EventsStore>(std::move(s));
  }
  Result<std::unique_ptr<ReportStore>> Reports() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<PostgresReportStore> s,
                         PostgresReportStore::Open(db_.url()));
    return std::unique_ptr<ReportStore>(std::move(s));
  }

 private:
  adserver::testing::TestDatabase db_;
};

// SQLite behind the fault-injecting wrapper (tests/support/faulty_stores.h), no fault planned
// unless a case plans one.
class WrappedSqliteEvents {
 public:
  static constexpr const char* kName = "sqlite_behind_the_fault_wrapper";
  std::string Unavailable() const { return ""; }
  std::string Broken() const { return ""; }
  Result<std::unique_ptr<EventsStore>> Events() {
    ADS_ASSIGN_OR_RETURN(std::unique_ptr<EventsStore> inner, inner_.Events());
    std::shared_ptr<EventsStore> owned = std::move(inner);
    return std::unique_ptr<EventsStore>(
        std::make_unique<adserver::testing::FaultyEventsStore>(*owned, plan, owned));
  }
  Result<std::unique_ptr<ReportStore>> Reports() { return inner_.Reports(); }
  adserver::testing::FaultPlan plan;

 private:
  SqliteEvents inner_;
};

ConversionCandidate Candidate(uint8_t tx, uint64_t person, int64_t block_time, Id campaign = 10,
                              bool once = true) {
  ConversionCandidate c;
  ConversionRecord& r = c.record;
  r.campaign_id = campaign;
  r.ad_id = 20;
  r.publisher_id = 1;
  r.ad_unit_id = "top";
  r.person = person;
  r.chain_id = 1;
  r.tx_hash[0] = tx;
  r.block_number = 100 + tx;
  r.block_hash[0] = tx;
  r.block_time = block_time;
  r.touched_at = block_time - 60;
  r.price = 3'000'000;
  c.count_once_per_person = once;
  c.window_seconds = 14 * 86400;
  return c;
}

// A billed click of decision `decision` (two bytes of it) on campaign 10.
ClickRecord Click(int decision, int64_t clicked_at = kT) {
  ClickRecord click;
  click.decision_id[0] = static_cast<uint8_t>(decision);
  click.decision_id[1] = static_cast<uint8_t>(decision >> 8);
  click.publisher_id = 1;
  click.ad_unit_id = "top";
  click.campaign_id = 10;
  click.ad_id = 20;
  click.served_at = kT - 60;
  click.clicked_at = clicked_at;
  click.price = 1'000'000;
  return click;
}

std::vector<ClickRecord> Clicks(uint8_t first, int n, ClickStatus status = ClickStatus::kBilled) {
  std::vector<ClickRecord> clicks;
  for (int i = 0; i < n; ++i) {
    clicks.push_back(Click(first + i, kT + i));
    clicks.back().status = status;
  }
  return clicks;
}

template <class Backend>
class EventsContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_.Broken().empty()) FAIL() << backend_.Broken();
    if (!backend_.Unavailable().empty()) GTEST_SKIP() << backend_.Unavailable();
    store_ = Open();
    ASSERT_TRUE(store_);
  }

  // Another adapter instance on the same database: a restarted process, or another node.
  std::unique_ptr<EventsStore> Open() {
    auto opened = backend_.Events();
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(*opened) : nullptr;
  }

  // Rolls up every click not rolled up yet; returns how many.
  int64_t RollUpAll() {
    int64_t total = 0;
    for (;;) {
      auto rolled = store_->RollUpClicks(1000);
      EXPECT_TRUE(rolled.ok()) << rolled.status().ToString();
      if (!rolled.ok() || *rolled == 0) return total;
      total += *rolled;
    }
  }

  Backend backend_;
  std::unique_ptr<EventsStore> store_;
};

using Backends = ::testing::Types<SqliteEvents, PostgresEvents, WrappedSqliteEvents>;
class BackendNames {
 public:
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};
TYPED_TEST_SUITE(EventsContractTest, Backends, BackendNames);

TYPED_TEST(EventsContractTest, ATransactionCountsOncePerCampaign) {
  EventsStore& s = *this->store_;
  auto first = s.InsertConversions(std::vector{Candidate(1, 5, kT), Candidate(1, 5, kT)}, kT);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->size(), 1u);
  auto again = s.InsertConversions(std::vector{Candidate(1, 5, kT)}, kT);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
  // The same transaction may count for another campaign.
  auto other = s.InsertConversions(std::vector{Candidate(1, 5, kT, /*campaign=*/11)}, kT);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->size(), 1u);
}

TYPED_TEST(EventsContractTest, OncePerPersonPerWindowUnlessTheCampaignAllowsMore) {
  EventsStore& s = *this->store_;
  auto a = s.InsertConversions(std::vector{Candidate(1, 5, kT), Candidate(2, 5, kT + 60)}, kT);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->size(), 1u);
  // After the window the person may convert again.
  auto later = s.InsertConversions(std::vector{Candidate(3, 5, kT + 15 * 86400)}, kT);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->size(), 1u);
  auto many = s.InsertConversions(
      std::vector{Candidate(4, 6, kT, 12, /*once=*/false), Candidate(5, 6, kT + 1, 12, false)}, kT);
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(many->size(), 2u);
}

TYPED_TEST(EventsContractTest, AReorgMarksItsBlocksConversionsAndTakesThemOutOfTheTotals) {
  EventsStore& s = *this->store_;
  ASSERT_TRUE(s.InsertConversions(std::vector{Candidate(1, 5, kT), Candidate(2, 6, kT)}, kT).ok());
  CampaignEventTotals before = *s.CampaignTotals(10);
  EXPECT_EQ(before.conversions, 2);
  EXPECT_EQ(before.conversion_spend, 6'000'000);
  std::array<uint8_t, 32> hash{};
  hash[0] = 2;
  auto reverted = s.RevertConversions(1, 102, hash, kT + 5);
  ASSERT_TRUE(reverted.ok()) << reverted.status().message();
  ASSERT_EQ(reverted->size(), 1u);
  EXPECT_EQ((*reverted)[0].price, 3'000'000);
  // Another hash at that height is another block: nothing to revert.
  hash[0] = 9;
  EXPECT_TRUE(s.RevertConversions(1, 101, hash, kT + 5)->empty());
  CampaignEventTotals after = *s.CampaignTotals(10);
  EXPECT_EQ(after.conversions, 1);
  EXPECT_EQ(after.conversion_spend, 3'000'000);
  EXPECT_EQ(after.reorged_conversions, 1);
  EXPECT_EQ(after.view_conversions, 1);
  EXPECT_EQ(after.click_conversions, 0);
  auto listed = s.ListConversions({.campaign_id = 10});
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].status, ConversionStatus::kReorged);
  EXPECT_EQ((*listed)[0].reverted_at, kT + 5);
  EXPECT_FALSE((*listed)[1].reverted_at.has_value());
  // The transaction mined again on the new branch counts again.
  auto remined = s.InsertConversions(std::vector{Candidate(2, 6, kT + 30)}, kT);
  ASSERT_TRUE(remined.ok());
  EXPECT_EQ(remined->size(), 1u);

  // How another process follows: every row after an id with its status, and the reorged ones
  // by when they were reverted, within an id range.
  auto all = s.ConversionsAfter(0, 10);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 3u);
  const Id reorged_id = (*reverted)[0].id;
  for (const ConversionRecord& c : *all) {
    EXPECT_EQ(c.status, c.id == reorged_id ? ConversionStatus::kReorged : ConversionStatus::kBilled);
  }
  const Id last = *s.LastConversionId();
  auto since = s.ReorgedConversionsSince(kT + 5, 0, last, 10);
  ASSERT_TRUE(since.ok()) << since.status().message();
  ASSERT_EQ(since->size(), 1u);
  EXPECT_EQ((*since)[0].id, reorged_id);
  EXPECT_EQ((*since)[0].price, 3'000'000);
  EXPECT_TRUE(s.ReorgedConversionsSince(kT + 6, 0, last, 10)->empty()) << "reverted before";
  EXPECT_TRUE(s.ReorgedConversionsSince(kT, reorged_id, last, 10)->empty()) << "after its id";
  EXPECT_TRUE(s.ReorgedConversionsSince(kT, 0, reorged_id - 1, 10)->empty()) << "beyond up_to";
}

// Issue 37: a batch bills a campaign's conversions while their prices fit in what is left of
// its total budget; the rest are recorded over_budget: listed and counted, never billed, never
// recorded twice, and gone with their block when a reorg abandons it.
TYPED_TEST(EventsContractTest, ConversionsPastTheTotalBudgetAreRecordedOverBudgetNotBilled) {
  EventsStore& s = *this->store_;
  std::vector<ConversionCandidate> batch{Candidate(1, 5, kT, 10, false),
                                         Candidate(2, 5, kT, 10, false),
                                         Candidate(3, 5, kT, 10, false)};
  for (ConversionCandidate& c : batch) c.budget_left = 7'000'000;  // two fit at 3 each
  auto first = s.InsertConversions(batch, kT);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->size(), 3u);
  EXPECT_EQ((*first)[0].status, ConversionStatus::kBilled);
  EXPECT_EQ((*first)[1].status, ConversionStatus::kBilled);
  EXPECT_EQ((*first)[2].status, ConversionStatus::kOverBudget);
  CampaignEventTotals totals = *s.CampaignTotals(10);
  EXPECT_EQ(totals.conversions, 2);
  EXPECT_EQ(totals.conversion_spend, 6'000'000);
  EXPECT_EQ(totals.over_budget_conversions, 1);
  // The reports count it apart from the billed ones, in every rollup table.
  auto reports = this->backend_.Reports();
  ASSERT_TRUE(reports.ok()) << reports.status().ToString();
  const auto rolled_up = [&](RollupTable table) {
    auto sums = (*reports)->QueryRollups(
        {.table = table, .from = kT - 86400, .to = kT + 86400, .group_seconds = 0});
    EXPECT_TRUE(sums.ok() && sums->size() == 1u);
    return sums.ok() && !sums->empty() ? (*sums)[0] : RollupGroup{};
  };
  for (RollupTable table : {RollupTable::kMinute, RollupTable::kHour, RollupTable::kDay}) {
    RollupGroup g = rolled_up(table);
    EXPECT_EQ(g.conversions, 2);
    EXPECT_EQ(g.over_budget_conversions, 1);
    EXPECT_EQ(g.spend, 6'000'000);
  }
  // Offered again (a crash before the indexer's commit): nothing is recorded twice, also when
  // the budget was raised meanwhile.
  for (ConversionCandidate& c : batch) c.budget_left = 100'000'000;
  auto again = s.InsertConversions(batch, kT);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_TRUE(again->empty());
  // Without a total budget nothing is over budget.
  auto unbudgeted = s.InsertConversions(std::vector{Candidate(4, 5, kT, 10, false)}, kT);
  ASSERT_TRUE(unbudgeted.ok());
  ASSERT_EQ(unbudgeted->size(), 1u);
  EXPECT_EQ((*unbudgeted)[0].status, ConversionStatus::kBilled);
  // Listed and followed with their status; a follower never bills them.
  auto listed = s.ListConversions({.campaign_id = 10});
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  ASSERT_EQ(listed->size(), 4u);
  EXPECT_EQ((*listed)[1].status, ConversionStatus::kOverBudget);
  auto followed = s.ConversionsAfter(0, 10);
  ASSERT_TRUE(followed.ok());
  ASSERT_EQ(followed->size(), 4u);
  EXPECT_EQ((*followed)[2].status, ConversionStatus::kOverBudget);
  // A reorg abandoning its block: nothing to take back from the ledger, and the row is gone
  // (the transaction is no longer on the chain); the same holds when the height is applied
  // again with another block.
  std::array<uint8_t, 32> hash{};
  hash[0] = 3;
  auto reverted = s.RevertConversions(1, 103, hash, kT + 5);
  ASSERT_TRUE(reverted.ok()) << reverted.status().message();
  EXPECT_TRUE(reverted->empty());
  EXPECT_EQ(s.CampaignTotals(10)->over_budget_conversions, 0);
  EXPECT_EQ(s.ListConversions({.campaign_id = 10})->size(), 3u);
  EXPECT_EQ(rolled_up(RollupTable::kDay).over_budget_conversions, 0);
  ConversionCandidate late = Candidate(5, 6, kT, 10, false);
  late.budget_left = 0;
  ASSERT_EQ(s.InsertConversions(std::vector{late}, kT)->size(), 1u);
  std::vector<BlockAtHeight> replaced{{.number = 105}};
  replaced[0].hash[0] = 0x55;
  auto replaced_reverted = s.RevertReplacedConversions(1, replaced, kT + 6);
  ASSERT_TRUE(replaced_reverted.ok()) << replaced_reverted.status().message();
  EXPECT_TRUE(replaced_reverted->empty());
  EXPECT_EQ(s.CampaignTotals(10)->over_budget_conversions, 0);
  EXPECT_EQ(s.CampaignTotals(10)->conversions, 3);
  EXPECT_EQ(rolled_up(RollupTable::kMinute).over_budget_conversions, 0);
  EXPECT_EQ(rolled_up(RollupTable::kDay).conversions, 3);
}

TYPED_TEST(EventsContractTest, RevertReplacedConversionsKeepsTheBlocksOwnAndImportedOnes) {
  EventsStore& s = *this->store_;
  ConversionCandidate imported = Candidate(3, 7, kT);
  imported.record.block_hash = {};  // an import row: no block hash
  ASSERT_TRUE(
      s.InsertConversions(std::vector{Candidate(1, 5, kT), Candidate(2, 6, kT), imported}, kT)
          .ok());
  // Heights 101..103 applied again: 101 with its own block, 102 and 103 with other blocks.
  std::vector<BlockAtHeight> blocks(3);
  blocks[0] = {.number = 101};
  blocks[0].hash[0] = 1;
  blocks[1] = {.number = 102};
  blocks[1].hash[0] = 0x77;
  blocks[2] = {.number = 103};
  blocks[2].hash[0] = 0x78;
  auto reverted = s.RevertReplacedConversions(1, blocks, kT + 5);
  ASSERT_TRUE(reverted.ok()) << reverted.status().message();
  ASSERT_EQ(reverted->size(), 1u);
  EXPECT_EQ((*reverted)[0].block_number, 102);
  EXPECT_EQ(s.CampaignTotals(10)->conversions, 2);
  EXPECT_TRUE(s.RevertReplacedConversions(1, blocks, kT + 6)->empty());  // done once
}

TYPED_TEST(EventsContractTest, ConversionsAreListedFollowedAndRoundTripEveryField) {
  EventsStore& s = *this->store_;
  EXPECT_EQ(*s.LastConversionId(), 0);
  ConversionCandidate click = Candidate(1, 5, kT);
  ConversionRecord& r = click.record;
  r.arm = "b";
  r.decision_id.fill(0xd1);
  r.wallet.bytes.fill(0xab);
  r.log_index = 3;
  r.click_touch = true;
  r.confirmed = false;
  r.person = 0xfedcba9876543210;  // beyond int64: stored as its bit pattern
  auto inserted = s.InsertConversions(std::vector{click, Candidate(2, 6, kT + 10, 11)}, kT + 99);
  ASSERT_TRUE(inserted.ok()) << inserted.status().message();
  ASSERT_EQ(inserted->size(), 2u);
  const Id first = (*inserted)[0].id;
  EXPECT_EQ(*s.LastConversionId(), (*inserted)[1].id);

  auto after = s.ConversionsAfter(0, 10);
  ASSERT_TRUE(after.ok()) << after.status().message();
  ASSERT_EQ(after->size(), 2u);
  const ConversionRecord& got = (*after)[0];
  EXPECT_EQ(got.id, first);
  EXPECT_EQ(got.arm, "b");
  EXPECT_EQ(got.ad_unit_id, "top");
  EXPECT_EQ(got.decision_id, r.decision_id);
  EXPECT_EQ(got.wallet.bytes, r.wallet.bytes);
  EXPECT_EQ(got.tx_hash, r.tx_hash);
  EXPECT_EQ(got.block_hash, r.block_hash);
  EXPECT_EQ(got.log_index, 3);
  EXPECT_EQ(got.block_number, 101);
  EXPECT_EQ(got.touched_at, kT - 60);
  EXPECT_TRUE(got.click_touch);
  EXPECT_FALSE(got.confirmed);
  EXPECT_EQ(got.person, 0xfedcba9876543210u);
  EXPECT_EQ(got.recorded_at, kT + 99);
  EXPECT_EQ(s.ConversionsAfter(first, 10)->size(), 1u);
  EXPECT_EQ(s.ConversionsAfter(0, 1)->size(), 1u);

  EXPECT_EQ(s.ListConversions({.campaign_id = 11})->size(), 1u);
  EXPECT_EQ(s.ListConversions({.publisher_id = 2})->size(), 0u);
  EXPECT_EQ(s.ListConversions({.from = kT + 5})->size(), 1u);
  EXPECT_EQ(s.ListConversions({.to = kT + 5})->size(), 1u);
  EXPECT_EQ(s.ListConversions({.before_id = (*inserted)[1].id})->size(), 1u);
  EXPECT_EQ(s.ListConversions({.community_id = 1})->size(), 0u);  // no such campaigns
  EXPECT_EQ(s.CampaignTotals(10)->click_conversions, 1);
}

TYPED_TEST(EventsContractTest, CountersFromEventsSumTheRollupsAndTheClicksNotRolledUp) {
  EventsStore& s = *this->store_;
  const int64_t now = kT / 86400 * 86400 + 12 * 3600 + 600;  // 12:10 of a day
  RollupRow served{.bucket = now - 2 * 86400, .publisher_id = 1, .campaign_id = 10, .ad_id = 20};
  served.fills = 100;
  served.impression_spend = 250'000;
  RollupRow today = served;
  today.bucket = now - 3600;  // 11:10: today, an earlier hour
  RollupRow this_hour = served;
  this_hour.bucket = now - 300;
  RollupRow unfilled{.bucket = now, .publisher_id = 1, .requests = 9, .no_fills = 9};
  ASSERT_TRUE(s.AddRollups(std::vector{served, today, this_hour, unfilled}).ok());
  ASSERT_TRUE(s.InsertConversions(std::vector{Candidate(1, 5, now - 60)}, now).ok());
  std::vector<ClickRecord> rolled = Clicks(1, 2);
  for (ClickRecord& c : rolled) c.clicked_at = now - 120;
  ASSERT_TRUE(s.InsertClicks(rolled).ok());
  ASSERT_EQ(*s.RollUpClicks(1000), 2);
  std::vector<ClickRecord> pending = Clicks(10, 1);
  pending[0].clicked_at = now - 30;
  pending.push_back(Clicks(20, 1, ClickStatus::kDuplicate)[0]);
  ASSERT_TRUE(s.InsertClicks(pending).ok());

  auto counters = s.CountersFromEvents(now);
  ASSERT_TRUE(counters.ok()) << counters.status().message();
  ASSERT_EQ(counters->size(), 1u);  // requests that filled nothing belong to no campaign
  const CampaignCountersRecord& c = (*counters)[0];
  EXPECT_EQ(c.campaign_id, 10);
  EXPECT_EQ(c.impressions, 300);
  EXPECT_EQ(c.clicks, 3);  // two rolled up, one not yet; the duplicate bills nothing
  EXPECT_EQ(c.conversions, 1);
  EXPECT_EQ(c.total_spend, 3 * 250'000 + 3 * 1'000'000 + 3'000'000);
  EXPECT_EQ(c.day, now / 86400);
  EXPECT_EQ(c.day_spend, 2 * 250'000 + 3 * 1'000'000 + 3'000'000);
  EXPECT_EQ(c.hour, now / 3600);
  EXPECT_EQ(c.hour_spend, 250'000 + 3 * 1'000'000 + 3'000'000);
}

// Rollups are upserted many rows per statement: a batch larger than one statement, added twice,
// keeps every row's own counts.
TYPED_TEST(EventsContractTest, ABatchOfManyRollupRowsAddsEveryRowOnce) {
  EventsStore& s = *this->store_;
  const int64_t now = kT / 86400 * 86400 + 12 * 3600;
  std::vector<RollupRow> rows;
  for (int i = 0; i < 150; ++i) {
    RollupRow r{.bucket = now, .publisher_id = 1, .campaign_id = 100 + i, .ad_id = 1000 + i};
    r.ad_unit_id = "slot-" + std::to_string(i % 7);
    r.fills = i + 1;
    r.impression_spend = 1'000 * (i + 1);
    rows.push_back(r);
  }
  ASSERT_TRUE(s.AddRollups(rows).ok());
  ASSERT_TRUE(s.AddRollups(rows).ok());
  auto counters = s.CountersFromEvents(now + 60);
  ASSERT_TRUE(counters.ok()) << counters.status().message();
  ASSERT_EQ(counters->size(), 150u);
  for (const CampaignCountersRecord& c : *counters) {
    const int64_t i = c.campaign_id - 100;
    EXPECT_EQ(c.impressions, 2 * (i + 1)) << c.campaign_id;
    EXPECT_EQ(c.total_spend, 2 * 1'000 * (i + 1)) << c.campaign_id;
  }
}

TYPED_TEST(EventsContractTest, BilledClickAtFindsOnlyBilledClicks) {
  std::vector<ClickRecord> clicks = {Click(1), Click(2)};
  clicks[1].status = ClickStatus::kExpired;
  ASSERT_TRUE(this->store_->InsertClicks(clicks).ok());
  EXPECT_EQ(*this->store_->BilledClickAt(clicks[0].decision_id), kT);
  EXPECT_FALSE(this->store_->BilledClickAt(clicks[1].decision_id)->has_value());
}

TYPED_TEST(EventsContractTest, ClicksRoundTripEveryFieldAndListWithFilters) {
  std::vector<ClickRecord> clicks = {Click(1), Click(2), Click(3)};
  clicks[0].arm = "a";
  clicks[0].person = 0x8000000000000001;  // beyond int64: stored as its bit pattern
  clicks[0].earlier_variant = true;
  clicks[0].ip = "2001:db8::";
  clicks[1].publisher_id = 2;
  clicks[1].clicked_at = kT + 100;
  clicks[2].campaign_id = 11;
  ASSERT_TRUE(this->store_->InsertClicks(clicks).ok());
  EXPECT_LT(clicks[0].id, clicks[1].id);
  EXPECT_LT(clicks[1].id, clicks[2].id);

  auto all = this->store_->ListClicks({});
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 3u);
  const ClickRecord& got = (*all)[2];  // newest first
  EXPECT_EQ(got.id, clicks[0].id);
  EXPECT_EQ(got.decision_id, clicks[0].decision_id);
  EXPECT_EQ(got.publisher_id, 1);
  EXPECT_EQ(got.ad_unit_id, "top");
  EXPECT_EQ(got.campaign_id, 10);
  EXPECT_EQ(got.ad_id, 20);
  EXPECT_EQ(got.arm, "a");
  EXPECT_EQ(got.served_at, kT - 60);
  EXPECT_EQ(got.clicked_at, kT);
  EXPECT_EQ(got.price, 1'000'000);
  EXPECT_EQ(got.person, 0x8000000000000001u);
  EXPECT_TRUE(got.earlier_variant);
  EXPECT_EQ(got.status, ClickStatus::kBilled);
  EXPECT_EQ(got.ip, "2001:db8::");

  EXPECT_EQ(this->store_->ListClicks({.campaign_id = 11})->size(), 1u);
  EXPECT_EQ(this->store_->ListClicks({.publisher_id = 2})->size(), 1u);
  EXPECT_EQ(this->store_->ListClicks({.from = kT + 1})->size(), 1u);
  EXPECT_EQ(this->store_->ListClicks({.to = kT + 1})->size(), 2u);
  EXPECT_EQ(this->store_->ListClicks({.before_id = clicks[2].id})->size(), 2u);
  EXPECT_EQ(this->store_->ListClicks({.limit = 1})->size(), 1u);
  EXPECT_EQ(this->store_->ListClicks({.community_id = 1})->size(), 0u);  // no such campaigns
}

TYPED_TEST(EventsContractTest, ClicksReachTheRollupsOnceThroughTheMark) {
  EventsStore& s = *this->store_;
  std::vector<ClickRecord> clicks = Clicks(1, 3);
  clicks.push_back(clicks[0]);  // a second click of the first decision: a duplicate
  ASSERT_TRUE(s.InsertClicks(clicks).ok());
  EXPECT_EQ(clicks[3].status, ClickStatus::kDuplicate);
  EXPECT_EQ(clicks[3].price, 0);
  EXPECT_EQ(s.CampaignTotals(10)->clicks, 0);  // the commit wrote the rows alone
  // Two at a time: the mark moves with each slice.
  EXPECT_EQ(*s.RollUpClicks(2), 2);
  EXPECT_EQ(s.CampaignTotals(10)->clicks, 2);
  EXPECT_EQ(*s.RollUpClicks(2), 2);
  EXPECT_EQ(*s.RollUpClicks(2), 0);
  CampaignEventTotals totals = *s.CampaignTotals(10);
  EXPECT_EQ(totals.clicks, 3);
  EXPECT_EQ(totals.duplicate_clicks, 1);
  EXPECT_EQ(totals.click_spend, 3'000'000);
}

TYPED_TEST(EventsContractTest, InvalidClicksKeepTheirReasonAndBillNothing) {
  EventsStore& s = *this->store_;
  std::vector<ClickRecord> clicks = Clicks(1, 3, ClickStatus::kInvalid);
  clicks[0].reason = "crawler";
  clicks[1].reason = "too_fast";
  clicks[2].reason = "crawler";
  clicks[2].ip = "198.51.100.0";
  ASSERT_TRUE(s.InsertClicks(clicks).ok());
  for (const ClickRecord& c : clicks) {
    EXPECT_EQ(c.status, ClickStatus::kInvalid);
    EXPECT_EQ(c.price, 0);
    EXPECT_FALSE(s.BilledClickAt(c.decision_id)->has_value());
  }
  std::vector<ClickRecord> listed = *s.ListClicks(EventQuery{.campaign_id = 10});
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].status, ClickStatus::kInvalid);
  EXPECT_EQ(listed[0].reason, "crawler");
  EXPECT_EQ(listed[0].ip, "198.51.100.0");
  EXPECT_EQ(listed[1].reason, "too_fast");
  // The decision of an invalid click can still be billed by a valid one.
  std::vector<ClickRecord> valid = Clicks(1, 1);
  ASSERT_TRUE(s.InsertClicks(valid).ok());
  EXPECT_EQ(valid[0].status, ClickStatus::kBilled);
  EXPECT_EQ(*s.RollUpClicks(100), 4);
  CampaignEventTotals totals = *s.CampaignTotals(10);
  EXPECT_EQ(totals.clicks, 1);
  EXPECT_EQ(totals.click_spend, 1'000'000);
  EXPECT_EQ(totals.invalid_clicks, 3);
  EXPECT_EQ(totals.invalid_clicks_by_reason,
            (std::map<std::string, int64_t>{{"crawler", 2}, {"too_fast", 1}}));
}

TYPED_TEST(EventsContractTest, InvalidImpressionsAreRolledUpApartByReason) {
  EventsStore& s = *this->store_;
  RollupRow row{.bucket = kT,
                .publisher_id = 1,
                .ad_unit_id = "top",
                .campaign_id = 10,
                .ad_id = 20,
                .requests = 5,
                .fills = 2,
                .invalid_fills = 3,
                .invalid_fills_by_reason = {{"crawler", 2}, {"wallet_rate", 1}},
                .impression_spend = 4000};
  ASSERT_TRUE(s.AddRollups(std::vector{row}).ok());
  row.bucket = kT + 86400;  // the next day adds up
  row.invalid_fills = 1;
  row.invalid_fills_by_reason = {{"crawler", 1}};
  ASSERT_TRUE(s.AddRollups(std::vector{row}).ok());
  CampaignEventTotals totals = *s.CampaignTotals(10);
  EXPECT_EQ(totals.impressions, 4);  // valid fills only
  EXPECT_EQ(totals.impression_spend, 8000);
  EXPECT_EQ(totals.invalid_impressions, 4);
  EXPECT_EQ(totals.invalid_impressions_by_reason,
            (std::map<std::string, int64_t>{{"crawler", 3}, {"wallet_rate", 1}}));
  EXPECT_EQ(s.CampaignTotals(11)->invalid_impressions, 0);
}

TYPED_TEST(EventsContractTest, AnInvalidClickOfABilledDecisionIsADuplicate) {
  EventsStore& s = *this->store_;
  std::vector<ClickRecord> billed = Clicks(1, 1);
  ASSERT_TRUE(s.InsertClicks(billed).ok());
  std::vector<ClickRecord> again = Clicks(1, 2, ClickStatus::kInvalid);
  for (ClickRecord& c : again) c.reason = "ip_rate_limit";
  ASSERT_TRUE(s.InsertClicks(again).ok());
  EXPECT_EQ(again[0].status, ClickStatus::kDuplicate);
  EXPECT_EQ(again[0].reason, "");
  EXPECT_EQ(again[1].status, ClickStatus::kInvalid);
  EXPECT_EQ(*s.RollUpClicks(100), 3);
  CampaignEventTotals totals = *s.CampaignTotals(10);
  EXPECT_EQ(totals.duplicate_clicks, 1);
  EXPECT_EQ(totals.invalid_clicks, 1);
  EXPECT_EQ(totals.invalid_clicks_by_reason.at("ip_rate_limit"), 1);
}

TYPED_TEST(EventsContractTest, ClicksNotRolledUpBeforeACrashAreRolledUpAfterIt) {
  std::vector<ClickRecord> early = Clicks(1, 2);
  ASSERT_TRUE(this->store_->InsertClicks(early).ok());
  ASSERT_EQ(*this->store_->RollUpClicks(1000), 2);
  std::vector<ClickRecord> late = Clicks(10, 3, ClickStatus::kExpired);
  ASSERT_TRUE(this->store_->InsertClicks(late).ok());
  this->store_.reset();  // the process ends before its next flush
  this->store_ = this->Open();
  ASSERT_TRUE(this->store_);
  EXPECT_EQ(*this->store_->RollUpClicks(1000), 3);
  EXPECT_EQ(*this->store_->RollUpClicks(1000), 0);
  CampaignEventTotals totals = *this->store_->CampaignTotals(10);
  EXPECT_EQ(totals.clicks, 2);
  EXPECT_EQ(totals.expired_clicks, 3);
}

TYPED_TEST(EventsContractTest, PruneKeepsClicksNotYetRolledUp) {
  EventsStore& s = *this->store_;
  std::vector<ClickRecord> clicks = Clicks(1, 2);
  ASSERT_TRUE(s.InsertClicks(clicks).ok());
  const int64_t much_later = kT + 365 * 86400;
  EXPECT_EQ(*s.Prune({}, much_later), 0);
  EXPECT_EQ(s.ListClicks({})->size(), 2u);
  ASSERT_EQ(*s.RollUpClicks(1000), 2);
  EXPECT_GE(*s.Prune({}, much_later), 2);
  EXPECT_TRUE(s.ListClicks({})->empty());
  EXPECT_EQ(s.CampaignTotals(10)->clicks, 2);  // daily rollups stay
}

TYPED_TEST(EventsContractTest, LastBilledClickSkipsDuplicatesAndExpiredClicks) {
  EventsStore& s = *this->store_;
  std::vector<ClickRecord> clicks = Clicks(1, 3);
  for (ClickRecord& c : clicks) c.person = 7;
  clicks[1].status = ClickStatus::kExpired;  // the latest valid one is clicks[2]
  clicks.push_back(clicks[2]);               // a duplicate of it, clicked later
  clicks.back().clicked_at = kT + 50;
  ASSERT_TRUE(s.InsertClicks(clicks).ok());
  auto last = s.LastBilledClick(10, 7, kT - 86400, kT + 100);
  ASSERT_TRUE(last.ok()) << last.status().message();
  ASSERT_TRUE(last->has_value());
  EXPECT_EQ((*last)->clicked_at, kT + 2);
  EXPECT_EQ((*last)->status, ClickStatus::kBilled);
  EXPECT_EQ((*s.LastBilledClick(10, 7, kT - 86400, kT + 1))->clicked_at, kT);
  EXPECT_FALSE(s.LastBilledClick(10, 8, kT - 86400, kT + 100)->has_value());
  EXPECT_FALSE(s.LastBilledClick(11, 7, kT - 86400, kT + 100)->has_value());
}

TYPED_TEST(EventsContractTest, ASecretIsTheFirstCandidateAnyProcessStored) {
  std::unique_ptr<EventsStore> other = this->Open();
  ASSERT_TRUE(other);
  const std::vector<uint8_t> first = {0, 1, 2, 0xff, 0x80, 0};
  const std::vector<uint8_t> second = {9, 9, 9};
  auto stored = this->store_->Secret("click_key", first);
  ASSERT_TRUE(stored.ok()) << stored.status().message();
  EXPECT_EQ(*stored, first);
  auto kept = other->Secret("click_key", second);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_EQ(*kept, first);
  EXPECT_EQ(*other->Secret("person_key", second), second);  // names are apart
}

// Two nodes store clicks of the same decisions at the same moment (a user's double click
// answered by two servers): whichever commits first bills; the other stores a duplicate.
TYPED_TEST(EventsContractTest, TwoNodesStoringTheSameDecisionsBillEachOnce) {
  std::unique_ptr<EventsStore> other = this->Open();
  ASSERT_TRUE(other);
  constexpr int kDecisions = 240;
  constexpr int kBatch = 3;
  EventsStore* nodes[] = {this->store_.get(), other.get()};
  std::vector<ClickRecord> stored[2];
  Status failed[2];
  std::latch start(2);
  auto node = [&](int n) {
    start.arrive_and_wait();
    for (int d = 0; d < kDecisions; d += kBatch) {
      std::vector<ClickRecord> batch;
      for (int i = d; i < d + kBatch; ++i) batch.push_back(Click(i));
      Status s = nodes[n]->InsertClicks(batch);
      if (!s.ok()) {
        failed[n] = s;
        return;
      }
      stored[n].insert(stored[n].end(), batch.begin(), batch.end());
    }
  };
  std::thread a(node, 0), b(node, 1);
  a.join();
  b.join();
  ASSERT_TRUE(failed[0].ok()) << failed[0].ToString();
  ASSERT_TRUE(failed[1].ok()) << failed[1].ToString();

  std::map<int, int> billed;  // decision -> billed clicks, as the nodes were told
  for (const auto& rows : stored) {
    for (const ClickRecord& c : rows) {
      if (c.status == ClickStatus::kBilled) ++billed[c.decision_id[0] | c.decision_id[1] << 8];
    }
  }
  EXPECT_EQ(billed.size(), size_t{kDecisions});
  for (const auto& [decision, n] : billed) EXPECT_EQ(n, 1) << "decision " << decision;
  EXPECT_EQ(this->RollUpAll(), 2 * kDecisions);
  CampaignEventTotals totals = *this->store_->CampaignTotals(10);
  EXPECT_EQ(totals.clicks, kDecisions);
  EXPECT_EQ(totals.duplicate_clicks, kDecisions);
  EXPECT_EQ(totals.click_spend, kDecisions * 1'000'000);
}

// Several nodes flush serving rollups, store clicks and roll them up at the same time, on rows
// they share (same buckets and dimensions, in a different order on each node): every count of
// every table adds up exactly, and every click is rolled up exactly once, however the rollers
// interleave with the click commits (a roller must never pass a click that commits after it
// read the clicks following the mark).
TYPED_TEST(EventsContractTest, RollupsOfSeveralNodesAddUpExactly) {
  constexpr int kWriters = 2;  // nodes storing clicks; one more node rolls them up
  constexpr int kRounds = 30;
  constexpr int kBatch = 8;  // clicks per commit: their ids interleave with the other writer's
  std::vector<std::unique_ptr<EventsStore>> nodes;
  for (int n = 0; n <= kWriters; ++n) {
    nodes.push_back(this->Open());
    ASSERT_TRUE(nodes.back());
  }
  // Four rows in two minutes of one hour, on two ad units.
  std::vector<RollupRow> rows;
  for (int64_t minute : {kT - kT % 3600, kT - kT % 3600 + 60}) {
    for (const char* unit : {"top", "side"}) {
      RollupRow r{.bucket = minute, .publisher_id = 1, .ad_unit_id = unit, .campaign_id = 10};
      r.requests = 2;
      r.fills = 1;
      r.invalid_fills = 1;
      r.invalid_fills_by_reason = {{"crawler", 1}};
      r.impression_spend = 10;
      rows.push_back(r);
    }
  }
  std::atomic<int64_t> rolled{0};
  std::atomic<int> writing{kWriters};
  std::atomic<int> commits{0};  // writer rounds done
  int64_t roller_rollups = 0;   // AddRollups calls of the roller
  std::vector<Status> failed(kWriters + 1);
  std::latch start(kWriters + 1);
  auto writer = [&](int n) {
    EventsStore& s = *nodes[n];
    std::vector<RollupRow> mine = rows;
    if (n % 2 == 1) std::reverse(mine.begin(), mine.end());
    start.arrive_and_wait();
    for (int round = 0; round < kRounds && failed[n].ok(); ++round) {
      std::vector<ClickRecord> clicks;
      for (int i = 0; i < kBatch; ++i) {
        clicks.push_back(Click((n * kRounds + round) * kBatch + i, kT + round));
      }
      failed[n] = s.AddRollups(mine);
      if (failed[n].ok()) failed[n] = s.InsertClicks(clicks);
      ++commits;
      commits.notify_all();
    }
    --writing;
    ++commits;
    commits.notify_all();
  };
  auto roller = [&](int n) {
    EventsStore& s = *nodes[n];
    const std::vector<RollupRow> mine = {rows[1], rows[3], rows[0], rows[2]};
    start.arrive_and_wait();
    // A round after each commit of a writer (while the other may be inserting clicks with ids
    // below the ones just committed), and a last one after both are done.
    for (int round = 1; failed[n].ok(); ++round) {
      const int seen = commits;
      const bool last = writing == 0;
      // Serving rows of its own now and then, in a third order.
      if (round % 4 == 0) {
        failed[n] = s.AddRollups(mine);
        ++roller_rollups;
      }
      Result<int64_t> r = s.RollUpClicks(1000);
      if (!r.ok()) failed[n] = r.status();
      if (r.ok()) rolled += *r;
      if (last) break;
      commits.wait(seen);
    }
  };
  std::vector<std::thread> threads;
  for (int n = 0; n < kWriters; ++n) threads.emplace_back(writer, n);
  threads.emplace_back(roller, kWriters);
  for (std::thread& t : threads) t.join();
  for (const Status& s : failed) ASSERT_TRUE(s.ok()) << s.ToString();

  constexpr int64_t kClicks = kWriters * kRounds * kBatch;
  EXPECT_EQ(rolled, kClicks);  // each once
  EXPECT_EQ(this->RollUpAll(), 0);
  const int64_t serving_rows = 4 * (kWriters * kRounds + roller_rollups);
  CampaignEventTotals totals = *this->store_->CampaignTotals(10);
  EXPECT_EQ(totals.impressions, serving_rows);
  EXPECT_EQ(totals.impression_spend, serving_rows * 10);
  EXPECT_EQ(totals.invalid_impressions, serving_rows);
  EXPECT_EQ(totals.invalid_impressions_by_reason,
            (std::map<std::string, int64_t>{{"crawler", serving_rows}}));
  EXPECT_EQ(totals.clicks, kClicks);
  EXPECT_EQ(totals.click_spend, kClicks * 1'000'000);
  // The minute and hour tables add up too (serving rows plus the clicks' rows).
  auto reports = this->backend_.Reports();
  ASSERT_TRUE(reports.ok()) << reports.status().ToString();
  for (RollupTable table : {RollupTable::kMinute, RollupTable::kHour, RollupTable::kDay}) {
    auto sums = (*reports)->QueryRollups(
        {.table = table, .from = kT - 86400, .to = kT + 86400, .group_seconds = 0});
    ASSERT_TRUE(sums.ok()) << sums.status().ToString();
    ASSERT_EQ(sums->size(), 1u);
    EXPECT_EQ((*sums)[0].requests, 2 * serving_rows);
    EXPECT_EQ((*sums)[0].fills, serving_rows);
    EXPECT_EQ((*sums)[0].clicks, kClicks);
    EXPECT_EQ((*sums)[0].spend, serving_rows * 10 + kClicks * 1'000'000);
  }
}

// SQLite only: the write-ahead log is checkpointed apart from the click writer.
TEST(SqliteEventsStoreTest, ClickCommitsLeaveTheLogToCheckpoint) {
  adserver::testing::TempDir dir;
  auto opened = SqliteEventsStore::Open(dir.File("adserver.db"));
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  SqliteEventsStore& store = **opened;
  auto db_bytes = [&] { return std::filesystem::file_size(dir.File("adserver.db")); };
  auto wal_bytes = [&] { return std::filesystem::file_size(dir.File("adserver.db-wal")); };
  ASSERT_TRUE(store.Checkpoint().ok());  // the migrations' pages
  const uintmax_t before = db_bytes();
  // Far more than SQLite's automatic checkpoint threshold (1000 pages) of clicks, in many
  // commits: the writer leaves them all in the log.
  for (int batch = 0; batch < 200; ++batch) {
    std::vector<ClickRecord> clicks(100);
    for (size_t i = 0; i < clicks.size(); ++i) {
      clicks[i].decision_id[0] = static_cast<uint8_t>(batch);
      clicks[i].decision_id[1] = static_cast<uint8_t>(batch >> 8);
      clicks[i].decision_id[2] = static_cast<uint8_t>(i);
      clicks[i].ad_unit_id = "a-placement-with-a-long-name-" + std::to_string(i);
      clicks[i].clicked_at = kT;
    }
    ASSERT_TRUE(store.InsertClicks(clicks).ok());
  }
  EXPECT_EQ(db_bytes(), before);
  EXPECT_GT(wal_bytes(), uintmax_t{1000} * 4096);
  ASSERT_TRUE(store.Checkpoint().ok());
  EXPECT_GT(db_bytes(), before + 1'000'000);
  EXPECT_EQ(store.ListClicks(EventQuery{.limit = 1000})->size(), 1000u);
}

}  // namespace
}  // namespace adserver::store

namespace adserver::store {
namespace {

// A failed write reaches nothing: the click batch that failed is not stored, and the next one is.
TEST(FaultyEventsStoreTest, AFailedClickBatchStoresNothingAndTheNextOneIsStored) {
  WrappedSqliteEvents backend;
  auto store = backend.Events();
  ASSERT_TRUE(store.ok());
  std::vector<ClickRecord> first = Clicks(1, 2);
  backend.plan.FailNext(1);
  EXPECT_EQ((*store)->InsertClicks(first).code(), Code::kUnavailable);
  auto none = (*store)->ListClicks(EventQuery{});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  std::vector<ClickRecord> again = Clicks(1, 2);
  ASSERT_TRUE((*store)->InsertClicks(again).ok());
  EXPECT_EQ((*store)->ListClicks(EventQuery{})->size(), 2u);
  EXPECT_EQ(backend.plan.failed(), 1);
}

}  // namespace
}  // namespace adserver::store
