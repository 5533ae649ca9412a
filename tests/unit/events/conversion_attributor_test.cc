#include "events/conversion_attributor.h"

#include <gtest/gtest.h>

#include <cstring>
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
  Result<std::vector<store::ConversionRecord>> ListConversions(
      const store::EventQuery& query) override {
    return real_.ListConversions(query);
  }
  Result<store::CampaignEventTotals> CampaignTotals(store::Id campaign_id) override {
    return real_.CampaignTotals(campaign_id);
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
  attributor_->OnApplied(kChain, blocks);
  ASSERT_EQ(billed_.size(), 1u);  // wallet 2 was never exposed
  EXPECT_EQ(billed_[0].wallet, Wallet(1));
  EXPECT_EQ(billed_[0].price, 2'000'000);
  EXPECT_FALSE(billed_[0].click_touch);
  // The same block again (an indexer restart replays it) counts nothing twice.
  attributor_->OnApplied(kChain, blocks);
  EXPECT_EQ(billed_.size(), 1u);
  EXPECT_EQ(Stored().size(), 1u);
}

TEST_F(ConversionAttributorTest, ConversionsTheStoreRefusedAreWrittenWithTheNextBlock) {
  Expose(Wallet(1), 11);
  Expose(Wallet(2), 12);
  flaky_->fail_inserts = true;
  std::vector<AppliedBlock> first{Block(100, Wallet(1))};
  attributor_->OnApplied(kChain, first);
  EXPECT_TRUE(billed_.empty());
  EXPECT_EQ(attributor_->pending(), 1u);
  EXPECT_TRUE(Stored().empty());

  flaky_->fail_inserts = false;
  // The next block has no conversion of its own: the waiting one is written anyway.
  std::vector<AppliedBlock> quiet{AppliedBlock{.number = 101, .timestamp = clock_.NowSeconds()}};
  attributor_->OnApplied(kChain, quiet);
  EXPECT_EQ(attributor_->pending(), 0u);
  ASSERT_EQ(billed_.size(), 1u);
  EXPECT_EQ(billed_[0].block_number, 100);

  // Refused with a conversion of its own, then both go in together, oldest first.
  flaky_->fail_inserts = true;
  std::vector<AppliedBlock> third{Block(102, Wallet(2))};
  attributor_->OnApplied(kChain, third);
  EXPECT_EQ(attributor_->pending(), 1u);
  flaky_->fail_inserts = false;
  attributor_->OnApplied(kChain, first);  // a replay of 100 alongside: still counted once
  EXPECT_EQ(attributor_->pending(), 0u);
  ASSERT_EQ(billed_.size(), 2u);
  EXPECT_EQ(billed_[1].block_number, 102);
  EXPECT_EQ(Stored().size(), 2u);
}

TEST_F(ConversionAttributorTest, AReorgDropsTheWaitingConversionsOfTheBlocksItUndoes) {
  Expose(Wallet(1), 11);
  Expose(Wallet(2), 12);
  flaky_->fail_inserts = true;
  std::vector<AppliedBlock> blocks{Block(100, Wallet(1)), Block(101, Wallet(2))};
  attributor_->OnApplied(kChain, blocks);
  EXPECT_EQ(attributor_->pending(), 2u);
  std::vector<RevertedBlock> undone{RevertedBlock{.number = 101, .hash = blocks[1].hash}};
  attributor_->OnReverted(kChain, undone);
  EXPECT_EQ(attributor_->pending(), 1u);
  flaky_->fail_inserts = false;
  std::vector<AppliedBlock> quiet{AppliedBlock{.number = 101, .timestamp = clock_.NowSeconds()}};
  attributor_->OnApplied(kChain, quiet);
  ASSERT_EQ(billed_.size(), 1u);
  EXPECT_EQ(billed_[0].block_number, 100);
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
  attributor_->OnImported(rows);
  ASSERT_EQ(billed_.size(), 1u);
  EXPECT_EQ(billed_[0].wallet, Wallet(1));
  EXPECT_EQ(billed_[0].block_number, 900);
  EXPECT_EQ(billed_[0].log_index, 2);
  EXPECT_TRUE(billed_[0].confirmed);
  EXPECT_EQ(billed_[0].block_hash, (std::array<uint8_t, 32>{}));
  // Imported again (another export holding the same transaction): counted once.
  attributor_->OnImported(rows);
  EXPECT_EQ(Stored().size(), 1u);
}

TEST_F(ConversionAttributorTest, AtMostKMaxPendingConversionsWait) {
  flaky_->fail_inserts = true;
  // Wallets exposed in bulk, then one block with more converting transactions than may wait.
  const size_t n = ConversionAttributor::kMaxPending + 10;
  std::vector<store::ExposureWrite> writes;
  AppliedBlock block{.number = 100, .timestamp = clock_.NowSeconds(), .confirmed = true};
  for (size_t i = 0; i < n; ++i) {
    Address w{};
    w.bytes[0] = static_cast<uint8_t>(i);
    w.bytes[1] = static_cast<uint8_t>(i >> 8);
    w.bytes[2] = static_cast<uint8_t>(i >> 16);
    writes.push_back({.wallet = w,
                      .campaign_id = kCampaign,
                      .entry = {.exposed_at = clock_.NowSeconds() - 60, .person = i + 1}});
    ChainInteraction tx{.wallet = w, .project_id = kProject, .chain_id = kChain};
    tx.tx_hash.bytes = {};
    std::memcpy(tx.tx_hash.bytes.data(), w.bytes.data(), 3);
    block.interactions.push_back(tx);
  }
  ASSERT_TRUE(exposures_->AddExposures(writes).ok());
  std::vector<AppliedBlock> blocks{std::move(block)};
  attributor_->OnApplied(kChain, blocks);
  EXPECT_EQ(attributor_->pending(), ConversionAttributor::kMaxPending);
}

}  // namespace
}  // namespace adserver::events
