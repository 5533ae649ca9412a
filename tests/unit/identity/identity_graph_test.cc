#include "identity/identity_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace adserver::identity {
namespace {

using store::IdentityKind;
using ::testing::ElementsAre;

constexpr int64_t kNow = 1'767'225'600;
constexpr int64_t kRetention = 1000;

Address W(uint8_t n) {
  Address a;
  a.bytes.fill(n);
  return a;
}

store::IdentityKey K(uint8_t n) {
  store::IdentityKey k;
  k.fill(n);
  return k;
}

std::vector<Address> Addrs(std::vector<store::IdentityWalletRecord> v) {
  std::vector<Address> out;
  for (auto& w : v) out.push_back(w.wallet);
  return out;
}

TEST(MergeWalletsTest, SeenWalletsComeFirstInRequestOrderThenOlderOnes) {
  std::vector<store::IdentityWalletRecord> wallets = {{W(1), 10}, {W(2), 30}, {W(3), 20}};
  std::vector<Address> seen = {W(4), W(3)};
  MergeWallets(wallets, seen, 100, 50);
  EXPECT_THAT(Addrs(wallets), ElementsAre(W(4), W(3), W(2), W(1)));
  EXPECT_EQ(wallets[0].last_seen, 100);
  EXPECT_EQ(wallets[1].last_seen, 100);  // re-seen: refreshed
  EXPECT_EQ(wallets[2].last_seen, 30);
}

TEST(MergeWalletsTest, KeepsOnlyTheMostRecentFifty) {
  std::vector<store::IdentityWalletRecord> wallets;
  for (uint8_t i = 1; i <= 50; ++i) wallets.push_back({W(i), i});  // W(1) is the oldest
  std::vector<Address> seen = {W(100), W(101)};
  MergeWallets(wallets, seen, 1000, 50);
  ASSERT_EQ(wallets.size(), 50u);
  EXPECT_EQ(wallets[0].wallet, W(100));
  EXPECT_EQ(wallets[1].wallet, W(101));
  EXPECT_EQ(wallets[2].wallet, W(50));
  EXPECT_EQ(wallets.back().wallet, W(3));  // W(1), W(2) dropped
}

TEST(MergeWalletsTest, DuplicatesInTheRequestAreLinkedOnce) {
  std::vector<store::IdentityWalletRecord> wallets;
  std::vector<Address> seen = {W(1), W(1), W(2)};
  MergeWallets(wallets, seen, 5, 50);
  EXPECT_THAT(Addrs(wallets), ElementsAre(W(1), W(2)));
}

TEST(IdentityGraphTest, LinkCreatesAndExtendsAnIdentity) {
  IdentityGraph g(kRetention);
  std::vector<Address> first = {W(1)};
  std::vector<Address> second = {W(2)};
  EXPECT_FALSE(g.Wallets(IdentityKind::kCookie, K(1), kNow).has_value());
  g.Link(IdentityKind::kCookie, K(1), first, kNow);
  g.Link(IdentityKind::kCookie, K(1), second, kNow + 1);
  EXPECT_THAT(*g.Wallets(IdentityKind::kCookie, K(1), kNow + 2), ElementsAre(W(2), W(1)));
  EXPECT_EQ(g.size(), 1u);
}

TEST(IdentityGraphTest, IdentitiesSharingAWalletAreNotMerged) {
  IdentityGraph g(kRetention);
  std::vector<Address> a = {W(1), W(2)};
  std::vector<Address> b = {W(2), W(3)};
  g.Link(IdentityKind::kCookie, K(1), a, kNow);
  g.Link(IdentityKind::kCookie, K(2), b, kNow);
  EXPECT_THAT(*g.Wallets(IdentityKind::kCookie, K(1), kNow), ElementsAre(W(1), W(2)));
  EXPECT_THAT(*g.Wallets(IdentityKind::kCookie, K(2), kNow), ElementsAre(W(2), W(3)));
  EXPECT_EQ(g.ForWallet(W(2)).size(), 2u);
}

TEST(IdentityGraphTest, KindsDoNotMix) {
  IdentityGraph g(kRetention);
  std::vector<Address> a = {W(1)};
  g.Link(IdentityKind::kLocal, K(1), a, kNow);
  EXPECT_FALSE(g.Wallets(IdentityKind::kCookie, K(1), kNow).has_value());
  EXPECT_TRUE(g.Wallets(IdentityKind::kLocal, K(1), kNow).has_value());
  EXPECT_FALSE(g.Touch(IdentityKind::kCookie, K(1), kNow));
}

TEST(IdentityGraphTest, ExpiredIdentitiesAndLinksAreAbsentAndSwept) {
  IdentityGraph g(kRetention);
  std::vector<Address> old_wallet = {W(1)};
  std::vector<Address> new_wallet = {W(2)};
  g.Link(IdentityKind::kCookie, K(1), old_wallet, kNow);
  g.Link(IdentityKind::kCookie, K(1), new_wallet, kNow + 600);
  g.Link(IdentityKind::kCookie, K(2), old_wallet, kNow);
  // At kNow + 1200: K(1)'s W(1) link expired, K(2) expired as a whole.
  EXPECT_THAT(*g.Wallets(IdentityKind::kCookie, K(1), kNow + 1200), ElementsAre(W(2)));
  EXPECT_FALSE(g.Wallets(IdentityKind::kCookie, K(2), kNow + 1200).has_value());
  EXPECT_FALSE(g.Touch(IdentityKind::kCookie, K(2), kNow + 1200));
  EXPECT_EQ(g.Sweep(kNow + 1200), 1u);
  EXPECT_EQ(g.size(), 1u);
  EXPECT_TRUE(g.ForWallet(W(1)).empty());
}

TEST(IdentityGraphTest, LinkingAnExpiredIdentityStartsItOver) {
  IdentityGraph g(kRetention);
  std::vector<Address> a = {W(1)};
  std::vector<Address> b = {W(2)};
  g.Link(IdentityKind::kCookie, K(1), a, kNow);
  g.Link(IdentityKind::kCookie, K(1), b, kNow + 5000);
  EXPECT_THAT(*g.Wallets(IdentityKind::kCookie, K(1), kNow + 5000), ElementsAre(W(2)));
}

TEST(IdentityGraphTest, DirtyIdentitiesAreTakenOnce) {
  IdentityGraph g(kRetention);
  std::vector<Address> a = {W(1)};
  g.Link(IdentityKind::kCookie, K(1), a, kNow);
  g.Link(IdentityKind::kCookie, K(1), a, kNow + 1);
  store::IdentityRecord loaded{K(2), IdentityKind::kLocal, kNow, {{W(5), kNow}}};
  g.Load(std::move(loaded));
  std::vector<store::IdentityRecord> dirty = g.TakeDirty();
  ASSERT_EQ(dirty.size(), 1u);
  EXPECT_EQ(dirty[0].key, K(1));
  EXPECT_EQ(dirty[0].last_seen, kNow + 1);
  EXPECT_TRUE(g.TakeDirty().empty());
  EXPECT_TRUE(g.Touch(IdentityKind::kLocal, K(2), kNow + 3));
  EXPECT_EQ(g.TakeDirty().size(), 1u);
}

TEST(IdentityGraphTest, EraseWalletRemovesLinksAndEmptiedIdentities) {
  IdentityGraph g(kRetention);
  std::vector<Address> only = {W(1)};
  std::vector<Address> two = {W(1), W(2)};
  g.Link(IdentityKind::kCookie, K(1), only, kNow);
  g.Link(IdentityKind::kLocal, K(2), two, kNow);
  EXPECT_EQ(g.EraseWallet(W(1)), 2u);
  EXPECT_FALSE(g.Wallets(IdentityKind::kCookie, K(1), kNow).has_value());
  EXPECT_THAT(*g.Wallets(IdentityKind::kLocal, K(2), kNow), ElementsAre(W(2)));
  EXPECT_EQ(g.size(), 1u);
  // The erased identity is not written back by a flush.
  std::vector<store::IdentityRecord> dirty = g.TakeDirty();
  ASSERT_EQ(dirty.size(), 1u);
  EXPECT_EQ(dirty[0].key, K(2));
}

}  // namespace
}  // namespace adserver::identity
