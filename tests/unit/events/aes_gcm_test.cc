#include "events/detail/aes_gcm.h"

#include <gtest/gtest.h>
#include <sodium.h>

#include <array>
#include <string_view>
#include <vector>

namespace adserver::events::detail {
namespace {

std::array<uint8_t, kGcmKeyBytes> Key(uint8_t fill) {
  std::array<uint8_t, kGcmKeyBytes> key;
  key.fill(fill);
  return key;
}

std::span<const uint8_t> Bytes(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

const std::array<uint8_t, kGcmNonceBytes> kNonce = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

bool SodiumAvailable() { return sodium_init() >= 0 && crypto_aead_aes256gcm_is_available() == 1; }

std::vector<uint8_t> Seal(const AesGcm& gcm, std::string_view plain, std::string_view ad) {
  std::vector<uint8_t> out(plain.size() + kGcmTagBytes);
  EXPECT_TRUE(gcm.Seal(kNonce, Bytes(ad), Bytes(plain), out.data()));
  return out;
}

std::optional<std::string> Open(const AesGcm& gcm, const std::vector<uint8_t>& sealed,
                                std::string_view ad) {
  std::string out(sealed.size() - kGcmTagBytes, '\0');
  if (!gcm.Open(kNonce, Bytes(ad), sealed, reinterpret_cast<uint8_t*>(out.data()))) {
    return std::nullopt;
  }
  return out;
}

TEST(AesGcmTest, MatchesTheStandardTestVector) {
  // NIST GCM test case 14 (McGrew and Viega): AES-256, zero key, zero 96-bit IV, one zero block.
  const std::array<uint8_t, 12> nonce{};
  const std::array<uint8_t, 16> plain{};
  const std::array<uint8_t, 32> expected = {0xce, 0xa7, 0x40, 0x3d, 0x4d, 0x60, 0x6b, 0x6e,
                                            0x07, 0x4e, 0xc5, 0xd3, 0xba, 0xf3, 0x9d, 0x18,
                                            0xd0, 0xd1, 0xc8, 0xa7, 0x99, 0x99, 0x6b, 0xf0,
                                            0x26, 0x5b, 0x98, 0xb5, 0xd4, 0x8a, 0xb9, 0x19};
  std::vector<GcmBackend> backends = {GcmBackend::kOpenSsl};
  if (SodiumAvailable()) backends.push_back(GcmBackend::kSodium);
  for (GcmBackend backend : backends) {
    AesGcm gcm(Key(0), backend);
    std::array<uint8_t, 32> out{};
    ASSERT_TRUE(gcm.Seal(nonce, {}, plain, out.data()));
    EXPECT_EQ(out, expected) << "backend " << static_cast<int>(backend);
  }
}

TEST(AesGcmTest, EitherBackendOpensWhatTheOtherSealed) {
  if (!SodiumAvailable()) GTEST_SKIP() << "this CPU has no AES-NI/PCLMUL for libsodium";
  AesGcm sodium(Key(7), GcmBackend::kSodium);
  AesGcm openssl(Key(7), GcmBackend::kOpenSsl);
  const std::string_view plain = "publisher 7, campaign 42, price 2.5";
  EXPECT_EQ(Seal(sodium, plain, "ad"), Seal(openssl, plain, "ad"));
  EXPECT_EQ(Open(openssl, Seal(sodium, plain, "ad"), "ad"), plain);
  EXPECT_EQ(Open(sodium, Seal(openssl, plain, "ad"), "ad"), plain);
}

TEST(AesGcmTest, RejectsTamperingWithEitherBackend) {
  std::vector<GcmBackend> backends = {GcmBackend::kOpenSsl};
  if (SodiumAvailable()) backends.push_back(GcmBackend::kSodium);
  for (GcmBackend backend : backends) {
    AesGcm gcm(Key(9), backend);
    std::vector<uint8_t> sealed = Seal(gcm, "claims", "associated");
    ASSERT_EQ(Open(gcm, sealed, "associated"), "claims");
    EXPECT_FALSE(Open(gcm, sealed, "associatee")) << "other associated data";
    for (size_t i = 0; i < sealed.size(); ++i) {
      std::vector<uint8_t> altered = sealed;
      altered[i] ^= 0x01;
      EXPECT_FALSE(Open(gcm, altered, "associated")) << "byte " << i;
    }
    EXPECT_FALSE(Open(AesGcm(Key(10), backend), sealed, "associated")) << "other key";
    std::array<uint8_t, kGcmTagBytes - 1> short_value{};
    uint8_t out[1];
    EXPECT_FALSE(gcm.Open(kNonce, {}, short_value, out));
  }
}

}  // namespace
}  // namespace adserver::events::detail
