#include "events/click_token.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/crypto.h"
#include "events/decision_id.h"

namespace adserver::events {
namespace {

using identity::KeyRing;

const std::string kKey1 = "1:" + std::string(64, 'a');
const std::string kKey2 = "2:" + std::string(64, 'b');

ClickClaims Claims() {
  return ClickClaims{.decision = NewDecisionId(1'767'225'600'123),
                     .publisher_id = 7,
                     .campaign_id = 123456789,
                     .ad_id = 42,
                     .served_at = 1'767'225'600,
                     .price = 2'500'000,
                     .person = 0xfedcba9876543210ULL,
                     .earlier_variant = true,
                     .arm = "b",
                     .ad_unit_id = "sidebar/top ü"};
}

TEST(DecisionIdTest, IsAUuidVersion7CarryingItsMilliseconds) {
  DecisionId id = NewDecisionId(1'767'225'600'123);
  std::string text = id.ToString();
  ASSERT_EQ(text.size(), 36u);
  EXPECT_EQ(text[14], '7');                                          // version
  EXPECT_NE(std::string("89ab").find(text[19]), std::string::npos);  // variant 10xx
  EXPECT_EQ(id.UnixMillis(), 1'767'225'600'123);
  EXPECT_EQ(DecisionId::Parse(text), id);
}

TEST(DecisionIdTest, IdsAreUniqueAndSortByTime) {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) seen.insert(NewDecisionId(1000).ToString());
  EXPECT_EQ(seen.size(), 10000u);
  EXPECT_LT(NewDecisionId(1000).ToString(), NewDecisionId(1001).ToString());
}

TEST(DecisionIdTest, ParseRejectsOtherForms) {
  std::string good = NewDecisionId(5).ToString();
  EXPECT_TRUE(DecisionId::Parse(good));
  EXPECT_FALSE(DecisionId::Parse(good.substr(1)));
  EXPECT_FALSE(DecisionId::Parse(good + "0"));
  std::string no_dash = good;
  no_dash[8] = '0';
  EXPECT_FALSE(DecisionId::Parse(no_dash));
  std::string bad_hex = good;
  bad_hex[0] = 'g';
  EXPECT_FALSE(DecisionId::Parse(bad_hex));
}

TEST(ClickTokenTest, RoundTripsEveryClaim) {
  ASSERT_TRUE(InitCrypto());
  KeyRing ring = *KeyRing::Parse(kKey1);
  ClickClaims claims = Claims();
  std::string token = SealClick(ring, claims);
  EXPECT_LT(token.size(), 140u) << token;
  for (char c : token) EXPECT_TRUE(isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_');
  std::optional<ClickClaims> opened = OpenClick(ring, token);
  ASSERT_TRUE(opened);
  EXPECT_EQ(*opened, claims);
}

TEST(ClickTokenTest, NegativeAndZeroValuesRoundTrip) {
  KeyRing ring = *KeyRing::Parse(kKey1);
  ClickClaims claims = Claims();
  claims.price = 0;
  claims.served_at = -5;
  claims.arm.clear();
  claims.ad_unit_id.clear();
  claims.earlier_variant = false;
  EXPECT_EQ(OpenClick(ring, SealClick(ring, claims)), claims);
}

TEST(ClickTokenTest, EveryAlteredCharacterIsRejected) {
  KeyRing ring = *KeyRing::Parse(kKey1);
  std::string token = SealClick(ring, Claims());
  for (size_t i = 0; i < token.size(); ++i) {
    std::string altered = token;
    altered[i] = altered[i] == 'A' ? 'B' : 'A';
    EXPECT_FALSE(OpenClick(ring, altered)) << "position " << i;
  }
}

TEST(ClickTokenTest, TruncatedOrExtendedTokensAreRejected) {
  KeyRing ring = *KeyRing::Parse(kKey1);
  std::string token = SealClick(ring, Claims());
  for (size_t n = 0; n < token.size(); ++n) EXPECT_FALSE(OpenClick(ring, token.substr(0, n)));
  EXPECT_FALSE(OpenClick(ring, token + "A"));
  EXPECT_FALSE(OpenClick(ring, token + "AAAA"));
  EXPECT_FALSE(OpenClick(ring, ""));
  EXPECT_FALSE(OpenClick(ring, "not a token at all"));
}

TEST(ClickTokenTest, ATokenOfAnotherInstallationDoesNotOpen) {
  KeyRing ours = *KeyRing::Parse(kKey1);
  KeyRing theirs = *KeyRing::Parse("1:" + std::string(64, 'c'));
  EXPECT_FALSE(OpenClick(ours, SealClick(theirs, Claims())));
}

TEST(ClickTokenTest, RotationKeepsTokensInFlightValid) {
  KeyRing before = *KeyRing::Parse(kKey1);
  KeyRing after = *KeyRing::Parse(kKey2 + "," + kKey1);  // new key first, old one kept
  ClickClaims claims = Claims();
  std::string old_token = SealClick(before, claims);
  EXPECT_EQ(OpenClick(after, old_token), claims);
  std::string new_token = SealClick(after, claims);
  EXPECT_EQ(OpenClick(after, new_token), claims);
  // Once the old key is dropped, its tokens stop opening.
  KeyRing dropped = *KeyRing::Parse(kKey2);
  EXPECT_FALSE(OpenClick(dropped, old_token));
  EXPECT_EQ(OpenClick(dropped, new_token), claims);
}

TEST(ClickTokenTest, TheDecisionIdCannotBeSwappedIntoAnotherToken) {
  KeyRing ring = *KeyRing::Parse(kKey1);
  std::string a = SealClick(ring, Claims());
  std::string b = SealClick(ring, Claims());
  // Bytes 1..16 are the decision id (base64 characters 2..22 cover them).
  std::string mixed = a.substr(0, 2) + b.substr(2, 20) + a.substr(22);
  EXPECT_FALSE(OpenClick(ring, mixed));
}

TEST(ClickTokenTest, LongAdUnitIdsAreCut) {
  KeyRing ring = *KeyRing::Parse(kKey1);
  ClickClaims claims = Claims();
  claims.ad_unit_id = std::string(5000, 'x');
  std::optional<ClickClaims> opened = OpenClick(ring, SealClick(ring, claims));
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->ad_unit_id, std::string(kMaxTokenAdUnitBytes, 'x'));
}

TEST(ClickTokenTest, CarriesTheServeContext) {
  KeyRing ring = *KeyRing::Parse(kKey1);
  ClickClaims claims = Claims();
  claims.serve_context = true;
  claims.served_at_millis = 999;
  claims.user_agent_hash = 0xFFFFFFFFu;
  std::optional<ClickClaims> opened = OpenClick(ring, SealClick(ring, claims));
  ASSERT_TRUE(opened.has_value());
  EXPECT_EQ(*opened, claims);
  claims.served_at_millis = 0;
  claims.user_agent_hash = 0;
  opened = OpenClick(ring, SealClick(ring, claims));
  ASSERT_TRUE(opened.has_value());
  EXPECT_TRUE(opened->serve_context);
  EXPECT_EQ(*opened, claims);
}

TEST(ClickTokenTest, CarriesTheImpressionsInvalidReason) {
  KeyRing ring = *KeyRing::Parse(kKey1);
  ClickClaims claims = Claims();
  claims.serve_context = true;
  claims.served_at_millis = 999;
  claims.user_agent_hash = 0xFFFFFFFFu;  // the bits below the reason are all set
  for (uint8_t reason : {uint8_t{0}, uint8_t{1}, uint8_t{11}, uint8_t{31}}) {
    claims.serve_invalid = reason;
    std::optional<ClickClaims> opened = OpenClick(ring, SealClick(ring, claims));
    ASSERT_TRUE(opened.has_value()) << int{reason};
    EXPECT_EQ(opened->serve_invalid, reason);
    EXPECT_EQ(*opened, claims);
  }
}

TEST(ClickTokenTest, TokensWithoutServeContextOpenAsBefore) {
  // Tokens sealed before issue 18 carried 0 in the field that now holds the serve context;
  // a token sealed without one is byte for byte such a token.
  KeyRing ring = *KeyRing::Parse(kKey1);
  ClickClaims claims = Claims();
  claims.serve_context = false;
  std::optional<ClickClaims> opened = OpenClick(ring, SealClick(ring, claims));
  ASSERT_TRUE(opened.has_value());
  EXPECT_FALSE(opened->serve_context);
  EXPECT_EQ(opened->user_agent_hash, 0u);
}

TEST(ClickTokenTest, SealingTwiceGivesTwoTokens) {
  // A fresh nonce per token: the same claims never seal to the same bytes.
  KeyRing ring = *KeyRing::Parse(kKey1);
  ClickClaims claims = Claims();
  std::string a = SealClick(ring, claims);
  std::string b = SealClick(ring, claims);
  EXPECT_NE(a, b);
  EXPECT_EQ(OpenClick(ring, a), claims);
  EXPECT_EQ(OpenClick(ring, b), claims);
}

TEST(ClickTokenTest, TokensOfTheFirstFormatStillOpen) {
  // Sealed by the release before the AES-256-GCM format (XChaCha20-Poly1305, the decision id as
  // nonce), under kKey1: clicks on ads served before an upgrade still count.
  const std::string v1 =
      "ARAREhMUFXYXmBkaGxwdHh8gH5fPk7ELQBNlcpODR_xuMWvF9gkfpZqorasAtLwaKWHH0RWx7X0pcvI1F8I6NOs4H5b"
      "kCQtIlxnoh8481ds";
  ClickClaims expected;
  for (size_t i = 0; i < 16; ++i) expected.decision.bytes[i] = static_cast<uint8_t>(0x10 + i);
  expected.decision.bytes[6] = 0x76;
  expected.decision.bytes[8] = 0x98;
  expected.publisher_id = 7;
  expected.campaign_id = 123456789;
  expected.ad_id = 42;
  expected.served_at = 1'767'225'600;
  expected.price = 2'500'000;
  expected.person = 0xfedcba9876543210ULL;
  expected.earlier_variant = true;
  expected.arm = "b";
  expected.ad_unit_id = "sidebar/top";
  expected.serve_context = true;
  expected.served_at_millis = 123;
  expected.user_agent_hash = 0xdeadbeef;
  EXPECT_EQ(OpenClick(*KeyRing::Parse(kKey1), v1), expected);
  EXPECT_FALSE(OpenClick(*KeyRing::Parse(kKey2), v1));
  for (size_t i = 0; i < v1.size(); i += 7) {
    std::string altered = v1;
    altered[i] = altered[i] == 'A' ? 'B' : 'A';
    EXPECT_FALSE(OpenClick(*KeyRing::Parse(kKey1), altered)) << "position " << i;
  }
}

TEST(UserAgentHashTest, IsFnv1a32) {
  EXPECT_EQ(UserAgentHash(""), 2166136261u);
  EXPECT_EQ(UserAgentHash("a"), 0xe40c292cu);
  EXPECT_NE(UserAgentHash("Mozilla/5.0 A"), UserAgentHash("Mozilla/5.0 B"));
}

}  // namespace
}  // namespace adserver::events
