#include "decision/activity_index.h"

#include <gtest/gtest.h>

namespace adserver::decision {
namespace {

Address Wallet(uint8_t b) {
  Address a;
  a.bytes.fill(b);
  return a;
}

TEST(ActivityIndexTest, LookupReturnsInteractionsSortedByProject) {
  ActivityIndex index;
  index.Add(Wallet(1), {.project_id = 9, .chain_id = 1, .last_seen_day = 5, .count = 1});
  index.Add(Wallet(1), {.project_id = 3, .chain_id = 137, .last_seen_day = 6, .count = 2});
  index.Add(Wallet(1), {.project_id = 3, .chain_id = 1, .last_seen_day = 7, .count = 3});
  index.Add(Wallet(2), {.project_id = 4, .chain_id = 1, .last_seen_day = 8, .count = 4});
  index.Finalize();

  auto got = index.Lookup(Wallet(1));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], (Interaction{.project_id = 3, .chain_id = 1, .last_seen_day = 7, .count = 3}));
  EXPECT_EQ(got[1].chain_id, 137u);
  EXPECT_EQ(got[2].project_id, 9u);
  EXPECT_EQ(index.Lookup(Wallet(2)).size(), 1u);
  EXPECT_EQ(index.wallet_count(), 2u);
}

TEST(ActivityIndexTest, UnknownWalletHasNoInteractions) {
  ActivityIndex index;
  index.Finalize();
  EXPECT_TRUE(index.Lookup(Wallet(7)).empty());
}

}  // namespace
}  // namespace adserver::decision
