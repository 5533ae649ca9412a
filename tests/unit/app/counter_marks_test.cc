// Issue 37 item 4: the budget counters follow the conversions table exactly across restarts.
// A server's counter flusher saves, with the counters, the marks of the conversions and reverts
// they hold (ConversionAttributor::Snapshot); a server starting from them bills what other
// processes recorded and undoes what they reverted while no server ran, once, also when it is
// killed before its first flush. Real SQLite (counters, events) and LMDB (exposures); the
// "processes" are the serving parts a Server wires (budget ledger, counter flusher,
// attributor), built as app/server.cc builds them, and a CLI attributor that does not follow.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "common/published.h"
#include "decision/budget_ledger.h"
#include "decision/catalog.h"
#include "events/conversion_attributor.h"
#include "ingest/counter_flusher.h"
#include "store/lmdb/lmdb_exposure_store.h"
#include "store/sqlite/sqlite_events_store.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace adserver {
namespace {

using ingest::chain::AppliedBlock;
using ingest::chain::ChainInteraction;
using ingest::chain::RevertedBlock;

constexpr int64_t kChain = 1;
constexpr int64_t kProject = 7;
constexpr int64_t kCampaign = 42;
constexpr Micros kBid = 2'000'000;

Address Wallet(uint8_t last) {
  Address a{};
  a.bytes[19] = last;
  return a;
}

class CounterMarksTest : public ::testing::Test {
 protected:
  // What a server holds of the counters: its ledger, flusher and following attributor.
  struct Server {
    std::unique_ptr<store::SqliteStore> store;  // its own connections, as a process has
    decision::BudgetLedger ledger;
    // Destroyed before the attributor its last flush follows with.
    std::unique_ptr<events::ConversionAttributor> attributor;
    std::unique_ptr<ingest::CounterFlusher> flusher;
    Micros Spend(int64_t now) const { return ledger.Read(kCampaign, now).total_spend; }
  };

  void SetUp() override {
    auto store = store::SqliteStore::Open(dir_.File("adserver.db"));
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store).value();
    auto events = store::SqliteEventsStore::Open(dir_.File("adserver.db"));
    ASSERT_TRUE(events.ok()) << events.status().message();
    events_ = std::move(events).value();
    auto exposures = store::LmdbExposureStore::Open(dir_.path().string());
    ASSERT_TRUE(exposures.ok()) << exposures.status().message();
    exposures_ = std::move(exposures).value();
    auto catalog = std::make_shared<decision::Catalog>();
    decision::Campaign campaign;
    campaign.id = kCampaign;
    campaign.id_str = "42";
    campaign.pricing_model = PricingModel::kCpa;
    campaign.bid_micros = kBid;
    campaign.conversion = decision::ConversionRule{.projects = {kProject}};
    catalog->campaigns.push_back(std::move(campaign));
    catalog->BuildIndexes();
    catalogs_.Publish(std::move(catalog));
    for (uint8_t w = 1; w <= 5; ++w) Expose(Wallet(w), w);
  }

  void Expose(const Address& wallet, uint64_t person) {
    store::ExposureWrite write{.wallet = wallet,
                               .campaign_id = kCampaign,
                               .entry = {.exposed_at = clock_.NowSeconds() - 3600,
                                         .ad_id = 5,
                                         .publisher_id = 1,
                                         .person = person}};
    write.entry.decision_id[0] = static_cast<uint8_t>(person);
    ASSERT_TRUE(exposures_->AddExposures({&write, 1}).ok());
  }

  // Block `number`: `wallet` converts.
  AppliedBlock Block(uint64_t number, const Address& wallet) {
    AppliedBlock block{.number = number, .timestamp = clock_.NowSeconds(), .confirmed = true};
    block.hash.bytes[0] = static_cast<uint8_t>(number);
    ChainInteraction tx{.wallet = wallet,
                        .project_id = kProject,
                        .chain_id = kChain,
                        .block_number = number,
                        .block_time = block.timestamp};
    tx.tx_hash.bytes[0] = static_cast<uint8_t>(number);
    block.interactions.push_back(tx);
    return block;
  }

  // A server's start-up (app/server.cc): counters recovered, conversions followed from the
  // saved marks, then reconciled with the events (which flushes with the marks). With
  // `killed_before_flush`, it stops right after following, as a kill -9 would.
  std::unique_ptr<Server> Start(bool killed_before_flush = false) {
    auto s = std::make_unique<Server>();
    auto opened = store::SqliteStore::Open(dir_.File("adserver.db"),
                                           {.busy_timeout = std::chrono::milliseconds(100)});
    EXPECT_TRUE(opened.ok()) << opened.status().message();
    s->store = std::move(opened).value();
    s->flusher =
        std::make_unique<ingest::CounterFlusher>(*s->store, s->ledger, std::chrono::hours(1));
    EXPECT_TRUE(s->flusher->Recover().ok());
    Server* raw = s.get();
    s->attributor = std::make_unique<events::ConversionAttributor>(
        *exposures_, *events_, catalogs_, clock_,
        [raw](const store::ConversionRecord& c) {
          raw->ledger.RecordConversion(c.campaign_id, c.price, c.recorded_at);
        },
        [raw](const store::ConversionRecord& c) {
          raw->ledger.UndoConversion(c.campaign_id, c.price, c.recorded_at);
        });
    auto marks = s->store->LoadCounterMarks();
    EXPECT_TRUE(marks.ok()) << marks.status().message();
    EXPECT_TRUE(s->attributor->StartFollowing(marks.ok() ? *marks : std::nullopt).ok());
    if (killed_before_flush) return s;
    s->flusher->SetMarks([raw](const std::function<void(const store::CounterMarks&)>& take) {
      return raw->attributor->Snapshot(take);
    });
    auto from_events = events_->CountersFromEvents(clock_.NowSeconds());
    EXPECT_TRUE(from_events.ok());
    EXPECT_TRUE(s->flusher->Reconcile(*from_events).ok());
    return s;
  }

  // Another process on the data directory (the CLI's `index`): attributes and reverts, bills
  // nothing in memory.
  std::unique_ptr<events::ConversionAttributor> Cli() {
    return std::make_unique<events::ConversionAttributor>(*exposures_, *events_, catalogs_, clock_,
                                                          nullptr, nullptr);
  }

  // Ends `s` as kill -9 would: its last flush (CounterFlusher::Stop) cannot write, another
  // connection holding the database's write lock.
  void Kill(std::unique_ptr<Server>& s) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir_.File("adserver.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    s.reset();
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }

  static void Revert(events::ConversionAttributor& a, const AppliedBlock& block) {
    RevertedBlock reverted{.number = block.number, .hash = block.hash};
    a.OnReverted(kChain, {&reverted, 1});
  }

  testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<store::SqliteEventsStore> events_;
  std::unique_ptr<store::LmdbExposureStore> exposures_;
  Published<decision::Catalog> catalogs_;
};

TEST_F(CounterMarksTest, RevertsAndConversionsMadeWhileNoServerRanReachTheCountersOnce) {
  const int64_t now = clock_.NowSeconds();
  const AppliedBlock b1 = Block(101, Wallet(1));
  const AppliedBlock b2 = Block(102, Wallet(2));
  {
    std::unique_ptr<Server> a = Start();
    std::vector<AppliedBlock> blocks{b1, b2};
    ASSERT_TRUE(a->attributor->OnApplied(kChain, blocks).ok());
    EXPECT_EQ(a->Spend(now), 2 * kBid);
    ASSERT_TRUE(a->flusher->Stop().ok());
  }
  // No server runs: the CLI's indexer sees a reorg abandon block 101.
  Revert(*Cli(), b1);
  {
    // Killed after following, before its first flush: the next start applies it again, once.
    std::unique_ptr<Server> killed = Start(/*killed_before_flush=*/true);
    EXPECT_EQ(killed->Spend(now), kBid);
    Kill(killed);
  }
  std::unique_ptr<Server> b = Start();
  EXPECT_EQ(b->Spend(now), kBid) << "the revert made while no server ran is taken out";
  // While it runs, the CLI records a conversion and reverts another: followed at the flush.
  const AppliedBlock b3 = Block(103, Wallet(3));
  std::unique_ptr<events::ConversionAttributor> cli = Cli();
  ASSERT_TRUE(cli->OnApplied(kChain, {&b3, 1}).ok());
  Revert(*cli, b2);
  ASSERT_TRUE(b->flusher->FlushNow().ok());
  EXPECT_EQ(b->Spend(now), kBid);
  // Its own conversion, then killed before the next flush: the counters lose it, the
  // conversions table keeps it.
  const AppliedBlock b5 = Block(105, Wallet(5));
  ASSERT_TRUE(b->attributor->OnApplied(kChain, {&b5, 1}).ok());
  EXPECT_EQ(b->Spend(now), 2 * kBid);
  Kill(b);
  // Then conversions and reverts while nothing runs.
  const AppliedBlock b4 = Block(104, Wallet(4));
  ASSERT_TRUE(cli->OnApplied(kChain, {&b4, 1}).ok());
  Revert(*cli, b3);
  std::unique_ptr<Server> c = Start();
  EXPECT_EQ(c->Spend(now), 2 * kBid) << "blocks 104 and 105";
  ASSERT_TRUE(c->flusher->Stop().ok());
  c.reset();
  std::unique_ptr<Server> d = Start();
  EXPECT_EQ(d->Spend(now), 2 * kBid) << "nothing applied twice";
  auto rows = store_->LoadCampaignCounters();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].total_spend, 2 * kBid);
  EXPECT_EQ((*rows)[0].conversions, 2);
}

// Counters saved before the marks existed (an upgrade): following starts at the current ends,
// as before, and the next flush saves marks.
TEST_F(CounterMarksTest, WithoutMarksFollowingStartsAtTheEndsAndTheFlushSavesThem) {
  const AppliedBlock b1 = Block(101, Wallet(1));
  ASSERT_TRUE(Cli()->OnApplied(kChain, {&b1, 1}).ok());
  auto none = store_->LoadCounterMarks();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  std::unique_ptr<Server> s = Start();
  // The reconcile raised the counters to the events (the conversion recorded while no server
  // ran), and saved them with marks.
  EXPECT_EQ(s->Spend(clock_.NowSeconds()), kBid);
  auto marks = store_->LoadCounterMarks();
  ASSERT_TRUE(marks.ok() && marks->has_value());
  EXPECT_EQ((*marks)->conversion_id, 1);
  EXPECT_EQ((*marks)->revert_seq, 0);
}

}  // namespace
}  // namespace adserver
