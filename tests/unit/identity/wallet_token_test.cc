#include "identity/wallet_token.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace adserver::identity {
namespace {

using ::testing::ElementsAre;

constexpr int64_t kNow = 1'767'225'600;
constexpr int64_t kMaxAge = 1000;

Address W(uint8_t n) {
  Address a;
  a.bytes.fill(n);
  return a;
}

KeyRing Ring(const std::string& text) { return *KeyRing::Parse(text); }
const std::string kKey1 = "1:" + std::string(64, '1');
const std::string kKey2 = "2:" + std::string(64, '2');

std::vector<Address> Wallets(const WalletLinks& links) {
  std::vector<Address> out;
  for (const WalletLink& l : links.view()) out.push_back(l.wallet);
  return out;
}

IdentityToken Token(std::vector<Address> wallets, int64_t sealed_at = kNow) {
  IdentityToken t;
  t.id.fill(7);
  t.sealed_at = sealed_at;
  for (size_t i = 0; i < wallets.size(); ++i) {
    t.wallets.push_back({wallets[i], sealed_at - static_cast<int64_t>(i) * 10});
  }
  return t;
}

TEST(MergeWalletsTest, SeenWalletsComeFirstInRequestOrderThenOlderOnes) {
  WalletLinks links;
  links.push_back({W(2), 30});
  links.push_back({W(3), 20});
  links.push_back({W(1), 10});
  std::vector<Address> seen = {W(4), W(3)};
  EXPECT_TRUE(MergeWallets(links, seen, 100, 50));
  EXPECT_THAT(Wallets(links), ElementsAre(W(4), W(3), W(2), W(1)));
  EXPECT_EQ(links[0].last_seen, 100);
  EXPECT_EQ(links[1].last_seen, 100);  // re-seen: refreshed
  EXPECT_EQ(links[2].last_seen, 30);
}

TEST(MergeWalletsTest, PresentingTheSameWalletsInTheSameOrderIsNoChange) {
  WalletLinks links;
  links.push_back({W(1), 10});
  links.push_back({W(2), 5});
  std::vector<Address> same_front = {W(1)};
  EXPECT_FALSE(MergeWallets(links, same_front, 100, 50));
  EXPECT_EQ(links[0].last_seen, 100);
  std::vector<Address> reordered = {W(2)};
  EXPECT_TRUE(MergeWallets(links, reordered, 101, 50));
  EXPECT_THAT(Wallets(links), ElementsAre(W(2), W(1)));
}

TEST(MergeWalletsTest, KeepsOnlyTheMostRecentUpToTheCap) {
  WalletLinks links;
  for (uint8_t i = 50; i >= 1; --i) links.push_back({W(i), i});  // W(1) is the oldest
  std::vector<Address> seen = {W(100), W(101)};
  EXPECT_TRUE(MergeWallets(links, seen, 1000, 50));
  ASSERT_EQ(links.size(), 50u);
  EXPECT_EQ(links[0].wallet, W(100));
  EXPECT_FALSE(links.Contains(W(1)));
  EXPECT_FALSE(links.Contains(W(2)));
  EXPECT_TRUE(links.Contains(W(3)));
  // A smaller configured cap, and a request of more wallets than the cap.
  std::vector<Address> many;
  for (uint8_t i = 1; i <= 60; ++i) many.push_back(W(i));
  WalletLinks fresh;
  MergeWallets(fresh, many, 5, 3);
  EXPECT_THAT(Wallets(fresh), ElementsAre(W(1), W(2), W(3)));
  MergeWallets(fresh, many, 5, 500);
  EXPECT_EQ(fresh.size(), kMaxWalletsPerIdentity);
}

TEST(WalletTokenTest, RoundTripsIdWalletsAndLinkTimes) {
  KeyRing ring = Ring(kKey1);
  IdentityToken t = Token({W(1), W(2), W(3)});
  std::string value = SealToken(ring, TokenKind::kCookie, t);
  std::optional<IdentityToken> back = UnsealToken(ring, TokenKind::kCookie, value, kNow, kMaxAge);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->id, t.id);
  EXPECT_EQ(back->sealed_at, kNow);
  EXPECT_THAT(Wallets(back->wallets), ElementsAre(W(1), W(2), W(3)));
  EXPECT_EQ(back->wallets[2].last_seen, kNow - 20);
  // Fresh random nonce per seal: the same token never seals to the same value twice.
  EXPECT_NE(SealToken(ring, TokenKind::kCookie, t), value);
  for (char c : value)
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_');
}

TEST(WalletTokenTest, TheWalletCapBoundsTheValueWellUnderBrowserCookieLimits) {
  KeyRing ring = Ring(kKey1);
  std::vector<Address> fifty;
  for (uint8_t i = 1; i <= kMaxWalletsPerIdentity; ++i) fifty.push_back(W(i));
  std::string value = SealToken(ring, TokenKind::kCookie, Token(fifty));
  EXPECT_EQ(value.size(), MaxTokenChars(kMaxWalletsPerIdentity));
  // RFC 6265 user agents keep at least 4096 bytes per cookie (name, value and attributes).
  EXPECT_LT(value.size() + 120, 4096u);
  EXPECT_EQ(SealToken(ring, TokenKind::kCookie, Token({W(1)})).size(), MaxTokenChars(1));
  ASSERT_TRUE(UnsealToken(ring, TokenKind::kCookie, value, kNow, kMaxAge).has_value());
}

TEST(WalletTokenTest, AnyTamperedCharacterIsNoToken) {
  KeyRing ring = Ring(kKey1);
  std::string value = SealToken(ring, TokenKind::kCookie, Token({W(1), W(2)}));
  for (size_t i = 0; i < value.size(); ++i) {
    std::string bad = value;
    bad[i] = bad[i] == 'A' ? 'B' : 'A';
    EXPECT_FALSE(UnsealToken(ring, TokenKind::kCookie, bad, kNow, kMaxAge)) << "at " << i;
  }
  for (std::string bad : {std::string(), std::string("x"), value.substr(0, value.size() - 1),
                          value + "A", value + "=", std::string(5000, 'A')}) {
    EXPECT_FALSE(UnsealToken(ring, TokenKind::kCookie, bad, kNow, kMaxAge)) << bad.size();
  }
}

TEST(WalletTokenTest, ACookieIsNotALocalIdAndViceVersa) {
  KeyRing ring = Ring(kKey1);
  std::string cookie = SealToken(ring, TokenKind::kCookie, Token({W(1)}));
  std::string local = SealToken(ring, TokenKind::kLocalId, Token({W(1)}));
  EXPECT_FALSE(UnsealToken(ring, TokenKind::kLocalId, cookie, kNow, kMaxAge));
  EXPECT_FALSE(UnsealToken(ring, TokenKind::kCookie, local, kNow, kMaxAge));
  EXPECT_TRUE(UnsealToken(ring, TokenKind::kLocalId, local, kNow, kMaxAge));
}

TEST(WalletTokenTest, ExpiresAfterMaxAgeAndRefusesTheFuture) {
  KeyRing ring = Ring(kKey1);
  std::string value = SealToken(ring, TokenKind::kCookie, Token({W(1)}));
  EXPECT_TRUE(UnsealToken(ring, TokenKind::kCookie, value, kNow + kMaxAge, kMaxAge));
  EXPECT_FALSE(UnsealToken(ring, TokenKind::kCookie, value, kNow + kMaxAge + 1, kMaxAge));
  EXPECT_TRUE(UnsealToken(ring, TokenKind::kCookie, value, kNow - 60, kMaxAge));  // skew
  EXPECT_FALSE(UnsealToken(ring, TokenKind::kCookie, value, kNow - 61, kMaxAge));
}

TEST(WalletTokenTest, RotationKeepsOldValuesOpenUntilTheKeyIsRetired) {
  std::string old_value = SealToken(Ring(kKey1), TokenKind::kCookie, Token({W(1)}));
  KeyRing rotated = Ring(kKey2 + "," + kKey1);
  EXPECT_TRUE(UnsealToken(rotated, TokenKind::kCookie, old_value, kNow, kMaxAge));
  std::string new_value = SealToken(rotated, TokenKind::kCookie, Token({W(1)}));
  EXPECT_FALSE(UnsealToken(Ring(kKey1), TokenKind::kCookie, new_value, kNow, kMaxAge))
      << "sealed with key 2, the active one";
  KeyRing retired = Ring(kKey2);
  EXPECT_FALSE(UnsealToken(retired, TokenKind::kCookie, old_value, kNow, kMaxAge));
  EXPECT_TRUE(UnsealToken(retired, TokenKind::kCookie, new_value, kNow, kMaxAge));
  // Same key id, other key bytes (a foreign server): no token.
  KeyRing foreign = Ring("1:" + std::string(64, '9'));
  EXPECT_FALSE(UnsealToken(foreign, TokenKind::kCookie, old_value, kNow, kMaxAge));
}

TEST(WalletTokenTest, LinkAgesSaturateInsteadOfWrapping) {
  KeyRing ring = Ring(kKey1);
  IdentityToken t = Token({W(1)});
  t.wallets.clear();
  t.wallets.push_back({W(1), kNow - (int64_t{1} << 40)});
  t.wallets.push_back({W(2), kNow + 100});  // a link "from the future" counts as now
  auto back =
      UnsealToken(ring, TokenKind::kCookie, SealToken(ring, TokenKind::kCookie, t), kNow, kMaxAge);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->wallets[0].last_seen, kNow - int64_t{UINT32_MAX});
  EXPECT_EQ(back->wallets[1].last_seen, kNow);
}

}  // namespace
}  // namespace adserver::identity
