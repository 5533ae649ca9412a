#include "identity/sealed_cookie.h"

#include <gtest/gtest.h>

#include <string>

#include "identity/key_ring.h"

namespace adserver::identity {
namespace {

constexpr int64_t kNow = 1'767'225'600;
constexpr int64_t kMaxAge = 86400;
const std::string kKey1 = "1:" + std::string(64, 'a');
const std::string kKey2 = "2:" + std::string(64, 'b');

store::IdentityKey Id(uint8_t fill) {
  store::IdentityKey k;
  k.fill(fill);
  return k;
}

KeyRing Ring(const std::string& text) {
  Result<KeyRing> r = KeyRing::Parse(text);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return *r;
}

TEST(KeyRingTest, ParsesEntriesFirstIsActive) {
  KeyRing ring = Ring(kKey2 + ",\n " + kKey1 + "\n");
  EXPECT_EQ(ring.size(), 2u);
  EXPECT_EQ(ring.active().id, 2);
  ASSERT_NE(ring.Find(1), nullptr);
  EXPECT_EQ(ring.Find(1)->bytes[0], 0xaa);
  EXPECT_EQ(ring.Find(3), nullptr);
}

TEST(KeyRingTest, RejectsMalformedRingsWithoutEchoingKeyMaterial) {
  for (std::string bad :
       {std::string(""), std::string(" , "), "1:" + std::string(63, 'a'),
        "0:" + std::string(64, 'a'), "256:" + std::string(64, 'a'), "x:" + std::string(64, 'a'),
        "1:" + std::string(64, 'g'), kKey1 + "," + kKey1, std::string(64, 'a')}) {
    Result<KeyRing> r = KeyRing::Parse(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    for (const FieldError& e : r.status().details()) {
      EXPECT_EQ(e.message.find("aaaa"), std::string::npos) << e.message;
    }
  }
}

TEST(SealedCookieTest, RoundTrips) {
  KeyRing ring = Ring(kKey1);
  std::string sealed = SealIdentity(ring, Id(7), kNow);
  EXPECT_EQ(sealed.size(), 87u);
  for (char c : sealed) EXPECT_TRUE(isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_');
  auto opened = UnsealIdentity(ring, sealed, kNow + 10, kMaxAge);
  ASSERT_TRUE(opened.has_value());
  EXPECT_EQ(opened->id, Id(7));
  EXPECT_EQ(opened->sealed_at, kNow);
  EXPECT_EQ(opened->key_id, 1);
}

TEST(SealedCookieTest, SameIdSealsDifferentlyEachTime) {
  KeyRing ring = Ring(kKey1);
  EXPECT_NE(SealIdentity(ring, Id(7), kNow), SealIdentity(ring, Id(7), kNow));
}

TEST(SealedCookieTest, RotationKeepsOldCookiesValidUntilTheKeyIsRetired) {
  KeyRing before = Ring(kKey1);
  std::string old_cookie = SealIdentity(before, Id(1), kNow);
  KeyRing rotated = Ring(kKey2 + "," + kKey1);  // new active key, old one still accepted
  auto opened = UnsealIdentity(rotated, old_cookie, kNow, kMaxAge);
  ASSERT_TRUE(opened.has_value());
  EXPECT_EQ(opened->key_id, 1);
  std::string new_cookie = SealIdentity(rotated, Id(1), kNow);
  EXPECT_EQ(UnsealIdentity(rotated, new_cookie, kNow, kMaxAge)->key_id, 2);
  KeyRing retired = Ring(kKey2);  // old key removed: its cookies are no identity
  EXPECT_FALSE(UnsealIdentity(retired, old_cookie, kNow, kMaxAge).has_value());
  EXPECT_TRUE(UnsealIdentity(retired, new_cookie, kNow, kMaxAge).has_value());
}

TEST(SealedCookieTest, ForeignKeyWithSameIdDoesNotOpen) {
  std::string sealed = SealIdentity(Ring(kKey1), Id(1), kNow);
  EXPECT_FALSE(
      UnsealIdentity(Ring("1:" + std::string(64, 'c')), sealed, kNow, kMaxAge).has_value());
}

TEST(SealedCookieTest, EveryTamperedCharacterIsRejected) {
  KeyRing ring = Ring(kKey1);
  std::string sealed = SealIdentity(ring, Id(9), kNow);
  for (size_t i = 0; i < sealed.size(); ++i) {
    std::string t = sealed;
    t[i] = t[i] == 'A' ? 'B' : 'A';
    // The last character carries 2 padding bits that a lenient decoder may ignore; either the
    // decode or the authentication must fail for every other change.
    if (i + 1 == sealed.size()) continue;
    EXPECT_FALSE(UnsealIdentity(ring, t, kNow, kMaxAge).has_value()) << i;
  }
}

TEST(SealedCookieTest, MalformedValuesAreNoIdentity) {
  KeyRing ring = Ring(kKey1);
  std::string sealed = SealIdentity(ring, Id(9), kNow);
  for (std::string bad : {std::string(), std::string("x"), sealed + "A", sealed.substr(1),
                          std::string(87, '='), std::string(87, '+')}) {
    EXPECT_FALSE(UnsealIdentity(ring, bad, kNow, kMaxAge).has_value()) << bad;
  }
}

TEST(SealedCookieTest, KeyIdByteIsAuthenticated) {
  // Same key bytes under ids 1 and 2: relabelling a value from id 1 to id 2 must fail.
  std::string sealed = SealIdentity(Ring("1:" + std::string(64, 'a')), Id(3), kNow);
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  // Byte 0 (the key id) = char 0 (top 6 bits) + the top 2 bits of char 1.
  ASSERT_EQ(sealed[0], 'A');
  size_t idx = alphabet.find(sealed[1]);
  ASSERT_EQ(idx >> 4, 1u);  // low bits of 0x01
  std::string moved = sealed;
  moved[1] = alphabet[(idx & 0x0f) | 0x20];  // 0x02
  KeyRing other = Ring("2:" + std::string(64, 'a'));
  EXPECT_FALSE(UnsealIdentity(other, moved, kNow, kMaxAge).has_value());
  EXPECT_TRUE(UnsealIdentity(Ring("1:" + std::string(64, 'a')), sealed, kNow, kMaxAge));
}

TEST(SealedCookieTest, ExpiredOrFutureValuesAreNoIdentity) {
  KeyRing ring = Ring(kKey1);
  std::string sealed = SealIdentity(ring, Id(9), kNow);
  EXPECT_TRUE(UnsealIdentity(ring, sealed, kNow + kMaxAge, kMaxAge).has_value());
  EXPECT_FALSE(UnsealIdentity(ring, sealed, kNow + kMaxAge + 1, kMaxAge).has_value());
  EXPECT_FALSE(UnsealIdentity(ring, sealed, kNow - 3600, kMaxAge).has_value());
}

}  // namespace
}  // namespace adserver::identity
