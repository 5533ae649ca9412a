#include "identity/sealed_cookie.h"

#include <sodium.h>

#include <array>
#include <cstring>

#include "common/check.h"
#include "common/crypto.h"

namespace adserver::identity {
namespace {

constexpr std::string_view kLabel = "adserver/identity/v1";
constexpr size_t kNonceBytes = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;  // 24
constexpr size_t kPlainBytes = 16 + 8;
constexpr size_t kCipherBytes = kPlainBytes + crypto_aead_xchacha20poly1305_ietf_ABYTES;
constexpr size_t kSealedBytes = 1 + kNonceBytes + kCipherBytes;  // 65
constexpr int64_t kMaxClockSkewSeconds = 60;

// Associated data: the label and the key id, so a value cannot be replayed under another id.
std::array<uint8_t, kLabel.size() + 1> AssociatedData(uint8_t key_id) {
  std::array<uint8_t, kLabel.size() + 1> ad{};
  std::memcpy(ad.data(), kLabel.data(), kLabel.size());
  ad[kLabel.size()] = key_id;
  return ad;
}

}  // namespace

std::string SealIdentity(const KeyRing& keys, const store::IdentityKey& id, int64_t now_seconds) {
  ADS_CHECK(InitCrypto()) << "libsodium cannot be initialised";
  const SealingKey& key = keys.active();
  std::array<uint8_t, kSealedBytes> sealed{};
  sealed[0] = key.id;
  uint8_t* nonce = sealed.data() + 1;
  randombytes_buf(nonce, kNonceBytes);
  std::array<uint8_t, kPlainBytes> plain{};
  std::memcpy(plain.data(), id.data(), id.size());
  uint64_t t = static_cast<uint64_t>(now_seconds);
  for (int i = 0; i < 8; ++i) plain[16 + i] = static_cast<uint8_t>(t >> (56 - 8 * i));
  auto ad = AssociatedData(key.id);
  unsigned long long cipher_len = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(sealed.data() + 1 + kNonceBytes, &cipher_len,
                                             plain.data(), plain.size(), ad.data(), ad.size(),
                                             nullptr, nonce, key.bytes.data());
  sodium_memzero(plain.data(), plain.size());
  char out[sodium_base64_ENCODED_LEN(kSealedBytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING)];
  sodium_bin2base64(out, sizeof out, sealed.data(), sealed.size(),
                    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  return std::string(out);
}

std::optional<Unsealed> UnsealIdentity(const KeyRing& keys, std::string_view value,
                                       int64_t now_seconds, int64_t max_age_seconds) {
  constexpr size_t kEncodedChars =
      sodium_base64_ENCODED_LEN(kSealedBytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING) - 1;
  if (value.size() != kEncodedChars) return std::nullopt;
  std::array<uint8_t, kSealedBytes> sealed{};
  size_t len = 0;
  const char* end = nullptr;
  if (sodium_base642bin(sealed.data(), sealed.size(), value.data(), value.size(), nullptr, &len,
                        &end, sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
      len != kSealedBytes || end != value.data() + value.size()) {
    return std::nullopt;
  }
  const SealingKey* key = keys.Find(sealed[0]);
  if (key == nullptr) return std::nullopt;
  auto ad = AssociatedData(key->id);
  std::array<uint8_t, kPlainBytes> plain{};
  unsigned long long plain_len = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(
          plain.data(), &plain_len, nullptr, sealed.data() + 1 + kNonceBytes, kCipherBytes,
          ad.data(), ad.size(), sealed.data() + 1, key->bytes.data()) != 0 ||
      plain_len != kPlainBytes) {
    return std::nullopt;
  }
  Unsealed out;
  out.key_id = key->id;
  std::memcpy(out.id.data(), plain.data(), out.id.size());
  uint64_t t = 0;
  for (int i = 0; i < 8; ++i) t = (t << 8) | plain[16 + i];
  out.sealed_at = static_cast<int64_t>(t);
  if (out.sealed_at > now_seconds + kMaxClockSkewSeconds ||
      now_seconds - out.sealed_at > max_age_seconds) {
    return std::nullopt;
  }
  return out;
}

}  // namespace adserver::identity
