#include "store/sqlite/sqlite_event_outbox.h"

#include <gtest/gtest.h>

#include <vector>

#include "support/temp_dir.h"

namespace adserver::store {
namespace {

ClickRecord Click(uint8_t decision, ClickStatus status = ClickStatus::kBilled) {
  ClickRecord c{.publisher_id = 3,
                .ad_unit_id = std::string("sidebar"),
                .campaign_id = 7,
                .ad_id = 9,
                .arm = std::string("b"),
                .served_at = 1'000,
                .clicked_at = 1'005,
                .price = 250'000,
                .person = UINT64_MAX - 1,  // the top bit survives the signed column
                .earlier_variant = true,
                .status = status,
                .reason = std::string(status == ClickStatus::kInvalid ? "crawler" : ""),
                .ip = std::string("192.0.2.0")};
  c.decision_id.fill(decision);
  return c;
}

TEST(SqliteEventOutboxTest, KeepsEveryFieldInOrderAcrossAReopen) {
  testing::TempDir dir;
  const std::string path = dir.File("outbox.db");
  {
    auto outbox = SqliteEventOutbox::Open(path);
    ASSERT_TRUE(outbox.ok()) << outbox.status().message();
    std::vector<ClickRecord> rows = {Click(1), Click(2, ClickStatus::kExpired)};
    ASSERT_TRUE((*outbox)->Append(rows).ok());
    EXPECT_LT(rows[0].id, rows[1].id);
  }
  auto outbox = SqliteEventOutbox::Open(path);
  ASSERT_TRUE(outbox.ok());
  EXPECT_EQ(*(*outbox)->Count(), 2);
  Result<std::vector<ClickRecord>> oldest = (*outbox)->Oldest(10);
  ASSERT_TRUE(oldest.ok());
  ASSERT_EQ(oldest->size(), 2u);
  ClickRecord want = Click(1);
  const ClickRecord& got = (*oldest)[0];
  EXPECT_EQ(got.decision_id, want.decision_id);
  EXPECT_EQ(got.publisher_id, want.publisher_id);
  EXPECT_EQ(got.ad_unit_id, want.ad_unit_id);
  EXPECT_EQ(got.campaign_id, want.campaign_id);
  EXPECT_EQ(got.ad_id, want.ad_id);
  EXPECT_EQ(got.arm, want.arm);
  EXPECT_EQ(got.served_at, want.served_at);
  EXPECT_EQ(got.clicked_at, want.clicked_at);
  EXPECT_EQ(got.price, want.price);
  EXPECT_EQ(got.person, want.person);
  EXPECT_TRUE(got.earlier_variant);
  EXPECT_EQ(got.status, ClickStatus::kBilled);
  EXPECT_EQ(got.ip, want.ip);
  EXPECT_EQ((*oldest)[1].status, ClickStatus::kExpired);
}

TEST(SqliteEventOutboxTest, ADecisionIsBilledOnceWhileBuffered) {
  testing::TempDir dir;
  auto outbox = SqliteEventOutbox::Open(dir.File("outbox.db"));
  ASSERT_TRUE(outbox.ok());
  std::vector<ClickRecord> first = {Click(5), Click(5)};
  ASSERT_TRUE((*outbox)->Append(first).ok());
  EXPECT_EQ(first[0].status, ClickStatus::kBilled);
  EXPECT_EQ(first[1].status, ClickStatus::kDuplicate) << "in the same batch";
  EXPECT_EQ(first[1].price, 0);
  std::vector<ClickRecord> later = {Click(5, ClickStatus::kInvalid), Click(6)};
  ASSERT_TRUE((*outbox)->Append(later).ok());
  EXPECT_EQ(later[0].status, ClickStatus::kDuplicate) << "in a later batch";
  EXPECT_EQ(later[1].status, ClickStatus::kBilled) << "another decision";
}

TEST(SqliteEventOutboxTest, RemoveDeletesWhatWasDeliveredOnly) {
  testing::TempDir dir;
  auto outbox = SqliteEventOutbox::Open(dir.File("outbox.db"));
  ASSERT_TRUE(outbox.ok());
  std::vector<ClickRecord> rows = {Click(1), Click(2), Click(3)};
  ASSERT_TRUE((*outbox)->Append(rows).ok());
  Result<std::vector<ClickRecord>> two = (*outbox)->Oldest(2);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->size(), 2u);
  ASSERT_TRUE((*outbox)->Remove(two->back().id).ok());
  EXPECT_EQ(*(*outbox)->Count(), 1);
  Result<std::vector<ClickRecord>> rest = (*outbox)->Oldest(10);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].decision_id, Click(3).decision_id);
}

}  // namespace
}  // namespace adserver::store
