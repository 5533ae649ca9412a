#include "events/conversion_attributor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "store/lmdb/lmdb_exposure_store.h"
#include "store/sqlite/sqlite_events_store.h"
#include "support/temp_dir.h"

namespace adserver::events {
namespace {

using ingest::chain::AppliedBlock;
using ingest::chain::ChainInteraction;
using ingest::chain::RevertedBlock;

// The real SQLite events store, whose conversion inserts fail while `fail_inserts` is set (a
// full disk, a database another process holds locked).
class FlakyEventsStore final : public store::EventsStore {
 public:
  explicit FlakyEventsStore(store::EventsStore& real) : real_(real) {}
  bool fail_inserts = false;

  Result<std::vector<uint8_t>> Secret(std::string_view name,
                                      std::span<const uint8_t> candidate) override {
    return real_.Secret(name, candidate);
  }
  Status InsertClicks(std::span<store::ClickRecord> rows) override {
    return real_.InsertClicks(rows);
  }
  Result<int64_t> RollUpClicks(int64_t max_rows) override { return real_.RollUpClicks(max_rows); }
  Status AddRollups(std::span<const store::RollupRow> rows) override {
    return real_.AddRollups(rows);
  }
  Result<std::vector<store::ClickRecord>> ListClicks(const store::EventQuery& query) override {
    return real_.ListClicks(query);
  }
  Result<std::optional<int64_t>> BilledClickAt(const store::DecisionIdBytes& id) override {
    return real_.BilledClickAt(id);
  }
  Result<std::optional<store::ClickRecord>> LastBilledClick(store::Id campaign_id, uint64_t person,
                                                            int64_t served_from,
                                                            int64_t clicked_by) override {
    return real_.LastBilledClick(campaign_id, person, served_from, clicked_by);
  }
  Result<std::vector<store::ConversionRecord>> InsertConversions(
      std::span<const store::ConversionCandidate> candidates, int64_t now) override {
    if (fail_inserts) return UnavailableError("database is locked");
    return real_.InsertConversions(candidates, now);
  }
  Result<std::vector<store::ConversionRecord>> RevertConversions(
      int64_t chain_id, int64_t block_number, const std::array<uint8_t, 32>& block_hash,
      int64_t now) override {
    return real_.RevertConversions(chain_id, block_number, block_hash, now);
  }
  Result<std::vector<store::ConversionRecord>> RevertReplacedConversions(
      int64_t chain_id, std::span<const store::BlockAtHeight> blocks, int64_t now) override {
    return real_.RevertReplacedConversions(chain_id, blocks, now);
  }
  Result<std::vector<store::ConversionRecord>> ListConversions(
      const store::EventQuery& query) override {
    return real_.ListConversions(query);
  }
  Result<store::CampaignEventTotals> CampaignTotals(store::Id campaign_id) override {
    return real_.CampaignTotals(campaign_id);
  }
  Result<std::vector<store::ConversionRecord>> ConversionsAfter(store::Id after_id,
                                                                int limit) override {
    return real_.ConversionsAfter(after_id, limit);
  }
  Result<std::vector<store::ConversionRecord>> ReorgedConversionsSince(
      int64_t since, store::Id after_id, store::Id up_to_id, int limit) override {
    return real_.ReorgedConversionsSince(since, after_id, up_to_id, limit);
  }
  Result<store::Id> LastConversionId() override { return real_.LastConversionId(); }
  Result<std::vector<store::ConversionRecord>> ReorgedConversionsAfterSeq(int64_t after_seq,
                                                                          int limit) override {
    return real_.ReorgedConversionsAfterSeq(after_seq, limit);
  }
  Result<int64_t> LastRevertSeq() override { return real_.LastRevertSeq(); }
  Result<std::vector<store::CampaignCountersRecord>> CountersFromEvents(int64_t now) override {
    return real_.CountersFromEvents(now);
  }
  Result<int64_t> Prune(const store::EventRetention& retention, int64_t now) override {
    return real_.Prune(retention, now);
  }

 private:
  store::EventsStore& real_;
};

constexpr int64_t kChain = 31337;
constexpr int64_t kProject = 7;
constexpr int64_t kCampaign = 42;

class ConversionAttributorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto events = store::SqliteEventsStore::Open(dir_.File("adserver.db"));
    ASSERT_TRUE(events.ok()) << events.status().message();
    events_ = std::move(events).value();
    flaky_ = std::make_unique<FlakyEventsStore>(*events_);
    auto exposures = store::LmdbExposureStore::Open(dir_.path().string());
    ASSERT_TRUE(exposures.ok()) << exposures.status().message();
    exposures_ = std::move(exposures).value();

    auto catalog = std::make_shared<decision::Catalog>();
    decision::Campaign campaign;
    campaign.id = kCampaign;
    campaign.id_str = "42";
    campaign.pricing_model = PricingModel::kCpa;
    campaign.bid_micros = 2'000'000;
    campaign.conversion = decision::ConversionRule{.projects = {kProject}};
    catalog->campaigns.push_back(std::move(campaign));
    catalog->BuildIndexes();
    catalogs_.Publish(std::move(catalog));

    attributor_ = std::make_unique<ConversionAttributor>(
        *exposures_, *flaky_, catalogs_, clock_,
        [this](const store::ConversionRecord& c) { billed_.push_back(c); },
        [this](const store::ConversionRecord& c) { reverted_.push_back(c); });
  }

  // `wallet` was served campaign 42 an hour ago.
  void Expose(const Address& wallet, uint64_t person) {
    store::ExposureWrite write{.wallet = wallet,
                               .campaign_id = kCampaign,
                               .entry = {.exposed_at = clock_.NowSeconds() - 3600,
                                         .ad_id = 5,
                                         .publisher_id = 1,
                                         .person = person,
                                         .arm = "a",
                                         .ad_unit_id = "top"}};
    write.entry.decision_id[0] = static_cast<uint8_t>(person);
    ASSERT_TRUE(exposures_->AddExposures({&write, 1}).ok());
  }

  // Block `number` where `wallet` sends one transaction to the conversion project.
  AppliedBlock Block(uint64_t number, const Address& wallet) {
    AppliedBlock block{.number = number, .timestamp = clock_.NowSeconds(), .confirmed = true};
    block.hash.bytes[0] = static_cast<uint8_t>(number);
    ChainInteraction tx{.wallet = wallet,
                        .project_id = kProject,
                        .chain_id = kChain,
                        .block_number = number,
                        .block_time = block.timestamp};
    tx.tx_hash.bytes[0] = static_cast<uint8_t>(number);
    tx.tx_hash.bytes[1] = wallet.bytes[19];
    block.interactions.push_back(tx);
    return block;
  }

  std::vector<store::ConversionRecord> Stored() {
    auto rows = events_->ListConversions(store::EventQuery{.campaign_id = kCampaign});
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? *rows : std::vector<store::ConversionRecord>{};
  }

  static Address Wallet(uint8_t last) {
    Address a{};
    a.bytes[19] = last;
    return a;
  }

  testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::SqliteEventsStore> events_;
  std::unique_ptr<FlakyEventsStore> flaky_;
  std::unique_ptr<store::LmdbExposureStore> exposures_;
  Published<decision::Catalog> catalogs_;
  std::unique_ptr<ConversionAttributor> attributor_;
  std::vector<store::ConversionRecord> billed_;
  std::vector<store::ConversionRecord> reverted_;
};

TEST_F(ConversionAttributorTest, AnExposedWalletsTransactionIsAConversionAndBillsOnce) {
  Expose(Wallet(1), 11);
  std::vector<AppliedBlock> blocks{Block(100, Wallet(1)), Block(101, Wallet(2))};
  ASSERT_TRUE(attributor_->OnApplied(kChain, blocks).ok());
  ASSERT_EQ(billed_.size(), 1u);  // wallet 2 was never exposed
  EXPECT_EQ(billed_[0].wallet, Wallet(1));
  EXPECT_EQ(billed_[0].price, 2'000'000);
  EXPECT_FALSE(billed_[0].click_touch);
  // The same block again (an indexer restart replays it) counts nothing twice.
  ASSERT_TRUE(attributor_->OnApplied(kChain, blocks).ok());
  EXPECT_EQ(billed_.size(), 1u);
  EXPECT_EQ(Stored().size(), 1u);
}

// Issue 37: a campaign paused (or ended) after the serve is no longer in the served campaigns,
// and its conversions inside the window are attributed and billed all the same.
TEST_F(ConversionAttributorTest, AStoppedCampaignsConversionsInsideTheWindowAreAttributed) {
  Expose(Wallet(1), 11);
  auto paused = std::make_shared<decision::Catalog>();
  paused->stopped_conversion_campaigns.push_back(
      {.id = kCampaign,
       .pricing_model = PricingModel::kCpa,
       .bid_micros = 2'000'000,
       .rule = decision::ConversionRule{.projects = {kProject}}});
  paused->BuildIndexes();
  ASSERT_EQ(paused->FindCampaign(kCampaign), nullptr);  // not served
  ASSERT_NE(paused->FindConversionCampaign(kCampaign), nullptr);
  catalogs_.Publish(std::move(paused));
  std::vector<AppliedBlock> blocks{Block(100, Wallet(1))};
  ASSERT_TRUE(attributor_->OnApplied(kChain, blocks).ok());
  ASSERT_EQ(billed_.size(), 1u);
  EXPECT_EQ(billed_[0].price, 2'000'000);
  EXPECT_EQ(Stored().size(), 1u);
}

// Issue 37: conversions bill up to the total budget, with the spend the callback reports; the
// rest are recorded over budget and never billed. A failing spend read fails the batch.
TEST_F(ConversionAttributorTest, ConversionsPastTheTotalBudgetAreRecordedButNotBilled) {
  auto catalog = std::make_shared<decision::Catalog>();
  decision::Campaign campaign;
  campaign.id = kCampaign;
  campaign.id_str = "42";
  campaign.pricing_model = PricingModel::kCpa;
  campaign.bid_micros = 2'000'000;
  campaign.total_budget_micros = 10'000'000;
  campaign.conversion = decision::ConversionRule{.projects = {kProject}};
  catalog->campaigns.push_back(std::move(campaign));
  catalog->BuildIndexes();
  catalogs_.Publish(std::move(catalog));
  Micros spent = 5'000'000;  // room for two conversions at 2
  bool fail = true;
  attributor_->SetSpentTotals([&](std::unordered_map<int64_t, Micros>& totals) -> Status {
    if (fail) return UnavailableError("database is locked");
    for (auto& [id, micros] : totals) micros = id == kCampaign ? spent : 0;
    return OkStatus();
  });
  std::vector<AppliedBlock> blocks;
  for (uint8_t w = 1; w <= 3; ++w) {
    Expose(Wallet(w), w);
    blocks.push_back(Block(100 + w, Wallet(w)));
  }
  EXPECT_FALSE(attributor_->OnApplied(kChain, blocks).ok());
  EXPECT_TRUE(Stored().empty());
  fail = false;
  ASSERT_TRUE(attributor_->OnApplied(kChain, blocks).ok());
  EXPECT_EQ(billed_.size(), 2u);
  std::vector<store::ConversionRecord> stored = Stored();
  ASSERT_EQ(stored.size(), 3u);
  EXPECT_EQ(stored[0].status, store::ConversionStatus::kOverBudget);  // newest first
  EXPECT_EQ(attributor_->over_budget().load(), 1u);
  // The next one, with the budget spent: over budget too.
  spent = 9'000'000;
  Expose(Wallet(4), 4);
  std::vector<AppliedBlock> next{Block(110, Wallet(4))};
  ASSERT_TRUE(attributor_->OnApplied(kChain, next).ok());
  EXPECT_EQ(billed_.size(), 2u);
  EXPECT_EQ(Stored()[0].status, store::ConversionStatus::kOverBudget);
}

TEST_F(ConversionAttributorTest, ABatchTheStoreRefusesFailsAndBillsNothingUntilOfferedAgain) {
  Expose(Wallet(1), 11);
  flaky_->fail_inserts = true;
  std::vector<AppliedBlock> blocks{Block(100, Wallet(1))};
  // The indexer commits nothing on this error and offers the block again after a backoff.
  EXPECT_FALSE(attributor_->OnApplied(kChain, blocks).ok());
  EXPECT_TRUE(billed_.empty());
  EXPECT_TRUE(Stored().empty());
  flaky_->fail_inserts = false;
  ASSERT_TRUE(attributor_->OnApplied(kChain, blocks).ok());
  ASSERT_EQ(billed_.size(), 1u);
  EXPECT_EQ(billed_[0].block_number, 100);
  EXPECT_EQ(Stored().size(), 1u);
}

TEST_F(ConversionAttributorTest, AHeightOfferedWithAnotherBlockRevertsTheOldBlocksConversions) {
  // Block 100 was attributed, then the indexer crashed before committing it; meanwhile a reorg
  // replaced it. The new block 100 (another hash, no conversion) comes next.
  Expose(Wallet(1), 11);
  std::vector<AppliedBlock> old_branch{Block(100, Wallet(1)), Block(101, Wallet(2))};
  ASSERT_TRUE(attributor_->OnApplied(kChain, old_branch).ok());
  ASSERT_EQ(billed_.size(), 1u);
  AppliedBlock replacement{.number = 100, .timestamp = clock_.NowSeconds(), .confirmed = true};
  replacement.hash.bytes[0] = 0xaa;
  std::vector<AppliedBlock> new_branch{replacement};
  ASSERT_TRUE(attributor_->OnApplied(kChain, new_branch).ok());
  ASSERT_EQ(reverted_.size(), 1u);
  EXPECT_EQ(reverted_[0].id, billed_[0].id);
  std::vector<store::ConversionRecord> stored = Stored();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].status, store::ConversionStatus::kReorged);
  // Offering the new block again reverts nothing more; the old block itself would count anew.
  ASSERT_TRUE(attributor_->OnApplied(kChain, new_branch).ok());
  EXPECT_EQ(reverted_.size(), 1u);
}

TEST_F(ConversionAttributorTest, AppliedBlocksKeepImportedConversionsAtTheirHeight) {
  Expose(Wallet(1), 11);
  ChainInteraction tx{.wallet = Wallet(1),
                      .project_id = kProject,
                      .chain_id = kChain,
                      .block_number = 100,
                      .block_time = clock_.NowSeconds() - 60};
  tx.tx_hash.bytes[0] = 0xee;
  std::vector<ChainInteraction> rows{tx};
  ASSERT_TRUE(attributor_->OnImported(rows).ok());
  ASSERT_EQ(billed_.size(), 1u);
  std::vector<AppliedBlock> blocks{
      AppliedBlock{.number = 100, .timestamp = clock_.NowSeconds(), .confirmed = true}};
  blocks[0].hash.bytes[0] = 0x42;
  ASSERT_TRUE(attributor_->OnApplied(kChain, blocks).ok());
  EXPECT_TRUE(reverted_.empty());
}

TEST_F(ConversionAttributorTest, AnImportTheStoreRefusesFails) {
  Expose(Wallet(1), 11);
  ChainInteraction tx{.wallet = Wallet(1),
                      .project_id = kProject,
                      .chain_id = kChain,
                      .block_time = clock_.NowSeconds() - 60};
  std::vector<ChainInteraction> rows{tx};
  flaky_->fail_inserts = true;
  EXPECT_FALSE(attributor_->OnImported(rows).ok());
  EXPECT_TRUE(billed_.empty());
}

TEST_F(ConversionAttributorTest, FollowOthersBillsWhatAnotherProcessRecordedOnce) {
  // Another process (the CLI's import) on the same database and exposure index.
  auto other_events = store::SqliteEventsStore::Open(dir_.File("adserver.db"));
  ASSERT_TRUE(other_events.ok());
  std::vector<store::ConversionRecord> other_billed;
  ConversionAttributor other(*exposures_, **other_events, catalogs_, clock_,
                             [&](const store::ConversionRecord& c) { other_billed.push_back(c); },
                             nullptr);
  Expose(Wallet(1), 11);
  Expose(Wallet(2), 12);
  Expose(Wallet(3), 13);
  std::vector<AppliedBlock> before{Block(99, Wallet(3))};
  ASSERT_TRUE(other.OnApplied(kChain, before).ok());  // before this server started
  ASSERT_TRUE(attributor_->StartFollowing().ok());
  std::vector<AppliedBlock> own{Block(100, Wallet(1))};
  ASSERT_TRUE(attributor_->OnApplied(kChain, own).ok());
  std::vector<AppliedBlock> theirs{Block(101, Wallet(2))};
  ASSERT_TRUE(other.OnApplied(kChain, theirs).ok());
  ASSERT_EQ(billed_.size(), 1u);
  ASSERT_TRUE(attributor_->FollowOthers().ok());
  ASSERT_EQ(billed_.size(), 2u);  // its own once, theirs once, the one before start not at all
  EXPECT_EQ(billed_[1].block_number, 101);
  ASSERT_TRUE(attributor_->FollowOthers().ok());
  EXPECT_EQ(billed_.size(), 2u);
  EXPECT_EQ(other_billed.size(), 2u);
}

TEST_F(ConversionAttributorTest, FollowOthersUndoesOnceWhatAnotherProcessRevertsOfWhatItBilled) {
  // Another process (the CLI's indexer) on the same database sees the reorgs.
  auto other_events = store::SqliteEventsStore::Open(dir_.File("adserver.db"));
  ASSERT_TRUE(other_events.ok());
  ConversionAttributor other(*exposures_, **other_events, catalogs_, clock_, nullptr, nullptr);
  for (uint8_t w = 1; w <= 4; ++w) Expose(Wallet(w), 10 + w);
  ASSERT_TRUE(attributor_->StartFollowing().ok());
  std::vector<AppliedBlock> own{Block(100, Wallet(1))};
  ASSERT_TRUE(attributor_->OnApplied(kChain, own).ok());
  std::vector<AppliedBlock> theirs{Block(101, Wallet(2))};
  ASSERT_TRUE(other.OnApplied(kChain, theirs).ok());
  ASSERT_TRUE(attributor_->FollowOthers().ok());
  ASSERT_EQ(billed_.size(), 2u);

  // The other process reverts both (its own, followed here, and this one's), and records and
  // reverts a third before this one follows it.
  clock_.Advance(std::chrono::seconds(5));
  std::vector<AppliedBlock> late{Block(102, Wallet(3))};
  ASSERT_TRUE(other.OnApplied(kChain, late).ok());
  std::vector<RevertedBlock> reorg{{.number = 102, .hash = late[0].hash},
                                   {.number = 101, .hash = theirs[0].hash},
                                   {.number = 100, .hash = own[0].hash}};
  other.OnReverted(kChain, reorg);
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(attributor_->FollowOthers().ok());
  EXPECT_EQ(billed_.size(), 2u) << "reverted before it was followed: never billed";
  ASSERT_EQ(reverted_.size(), 2u);
  std::vector<uint64_t> blocks{static_cast<uint64_t>(reverted_[0].block_number),
                               static_cast<uint64_t>(reverted_[1].block_number)};
  std::sort(blocks.begin(), blocks.end());
  EXPECT_EQ(blocks, (std::vector<uint64_t>{100, 101}));
  // Each once, also while the reads' window still covers them, and after it moved on.
  ASSERT_TRUE(attributor_->FollowOthers().ok());
  clock_.Advance(std::chrono::seconds(120));
  ASSERT_TRUE(attributor_->FollowOthers().ok());
  ASSERT_TRUE(attributor_->FollowOthers().ok());
  EXPECT_EQ(reverted_.size(), 2u);

  // Its own revert of its own conversion is not undone a second time by following.
  std::vector<AppliedBlock> again{Block(103, Wallet(4))};
  ASSERT_TRUE(attributor_->OnApplied(kChain, again).ok());
  ASSERT_EQ(billed_.size(), 3u);
  std::vector<RevertedBlock> mine{{.number = 103, .hash = again[0].hash}};
  attributor_->OnReverted(kChain, mine);
  ASSERT_EQ(reverted_.size(), 3u);
  ASSERT_TRUE(attributor_->FollowOthers().ok());
  EXPECT_EQ(reverted_.size(), 3u);
}

TEST_F(ConversionAttributorTest, ImportedTransactionsConvertLikeTheInteractionsOfABlock) {
  const int64_t now = clock_.NowSeconds();
  EXPECT_TRUE(attributor_->Wants(kProject, now - 60));
  EXPECT_FALSE(attributor_->Wants(kProject, now - 15 * 86400));  // before every window
  EXPECT_FALSE(attributor_->Wants(kProject + 1, now));           // no rule names it
  Expose(Wallet(1), 11);
  ChainInteraction tx{.wallet = Wallet(1),
                      .project_id = kProject,
                      .chain_id = kChain,
                      .log_index = 2,
                      .block_number = 900,
                      .block_time = now - 60};
  tx.tx_hash.bytes[0] = 0xee;
  ChainInteraction stranger = tx;
  stranger.wallet = Wallet(2);
  std::vector<ChainInteraction> rows{tx, stranger};
  ASSERT_TRUE(attributor_->OnImported(rows).ok());
  ASSERT_EQ(billed_.size(), 1u);
  EXPECT_EQ(billed_[0].wallet, Wallet(1));
  EXPECT_EQ(billed_[0].block_number, 900);
  EXPECT_EQ(billed_[0].log_index, 2);
  EXPECT_TRUE(billed_[0].confirmed);
  EXPECT_EQ(billed_[0].block_hash, (std::array<uint8_t, 32>{}));
  // Imported again (another export holding the same transaction): counted once.
  ASSERT_TRUE(attributor_->OnImported(rows).ok());
  EXPECT_EQ(Stored().size(), 1u);
}

}  // namespace
}  // namespace adserver::events
