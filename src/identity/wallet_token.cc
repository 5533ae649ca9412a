#include "identity/wallet_token.h"

#include <sodium.h>

#include <algorithm>
#include <cstring>

#include "common/check.h"
#include "common/crypto.h"

namespace adserver::identity {
namespace {

constexpr std::string_view kLabel = "adserver/identity/v2";
constexpr size_t kNonceBytes = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;  // 24
constexpr size_t kTagBytes = crypto_aead_xchacha20poly1305_ietf_ABYTES;       // 16
constexpr size_t kHeadBytes = 16 + 8 + 1;                                     // id, time, n
constexpr size_t kLinkBytes = 20 + 4;                                         // wallet, age
constexpr size_t kMaxPlainBytes = kHeadBytes + kLinkBytes * kMaxWalletsPerIdentity;
constexpr size_t kMaxSealedBytes = 1 + kNonceBytes + kMaxPlainBytes + kTagBytes;
constexpr size_t kMinSealedBytes = 1 + kNonceBytes + kHeadBytes + kLinkBytes + kTagBytes;
constexpr int64_t kMaxClockSkewSeconds = 60;
static_assert(MaxTokenChars(kMaxWalletsPerIdentity) ==
              sodium_base64_ENCODED_LEN(kMaxSealedBytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING) -
                  1);

using AssociatedData = std::array<uint8_t, kLabel.size() + 2>;

// The label, the kind and the key id: a value cannot be replayed as the other kind or under
// another key id.
AssociatedData MakeAssociatedData(TokenKind kind, uint8_t key_id) {
  AssociatedData ad{};
  std::memcpy(ad.data(), kLabel.data(), kLabel.size());
  ad[kLabel.size()] = static_cast<uint8_t>(kind);
  ad[kLabel.size() + 1] = key_id;
  return ad;
}

void PutBigEndian(uint8_t* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(v >> (8 * (bytes - 1 - i)));
}

uint64_t GetBigEndian(const uint8_t* in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | in[i];
  return v;
}

size_t EncodePlain(const IdentityToken& token, uint8_t* plain) {
  std::memcpy(plain, token.id.data(), token.id.size());
  PutBigEndian(plain + 16, static_cast<uint64_t>(token.sealed_at), 8);
  plain[24] = static_cast<uint8_t>(token.wallets.size());
  uint8_t* out = plain + kHeadBytes;
  for (const WalletLink& link : token.wallets.view()) {
    std::memcpy(out, link.wallet.bytes.data(), 20);
    int64_t age = std::clamp<int64_t>(token.sealed_at - link.last_seen, 0, UINT32_MAX);
    PutBigEndian(out + 20, static_cast<uint64_t>(age), 4);
    out += kLinkBytes;
  }
  return static_cast<size_t>(out - plain);
}

// False when the authenticated plain text is not of our layout (a future format).
bool DecodePlain(const uint8_t* plain, size_t size, IdentityToken& token) {
  if (size < kHeadBytes) return false;
  size_t n = plain[24];
  if (n == 0 || n > kMaxWalletsPerIdentity || size != kHeadBytes + n * kLinkBytes) return false;
  std::memcpy(token.id.data(), plain, token.id.size());
  token.sealed_at = static_cast<int64_t>(GetBigEndian(plain + 16, 8));
  const uint8_t* in = plain + kHeadBytes;
  for (size_t i = 0; i < n; ++i, in += kLinkBytes) {
    WalletLink link;
    std::memcpy(link.wallet.bytes.data(), in, 20);
    link.last_seen = token.sealed_at - static_cast<int64_t>(GetBigEndian(in + 20, 4));
    token.wallets.push_back(link);  // authenticated: sealed by us without duplicates
  }
  return true;
}

}  // namespace

void WalletLinks::push_back(const WalletLink& link) {
  ADS_CHECK(size_ < links_.size()) << "more than " << links_.size() << " wallet links";
  links_[size_++] = link;
}

bool WalletLinks::Contains(const Address& wallet) const {
  for (size_t i = 0; i < size_; ++i) {
    if (links_[i].wallet == wallet) return true;
  }
  return false;
}

bool MergeWallets(WalletLinks& links, std::span<const Address> seen, int64_t now,
                  size_t max_wallets) {
  max_wallets = std::min(max_wallets, kMaxWalletsPerIdentity);
  WalletLinks merged;
  for (const Address& a : seen) {
    if (merged.size() == max_wallets) break;
    if (!merged.Contains(a)) merged.push_back({a, now});
  }
  for (const WalletLink& old : links.view()) {
    if (merged.size() == max_wallets) break;
    if (!merged.Contains(old.wallet)) merged.push_back(old);
  }
  bool changed = merged.size() != links.size();
  for (size_t i = 0; !changed && i < merged.size(); ++i) {
    changed = merged[i].wallet != links[i].wallet;
  }
  links = merged;
  return changed;
}

std::string SealToken(const KeyRing& keys, TokenKind kind, const IdentityToken& token) {
  ADS_CHECK(InitCrypto()) << "libsodium cannot be initialised";
  ADS_CHECK(!token.wallets.empty()) << "a token names at least one wallet";
  const SealingKey& key = keys.active();
  std::array<uint8_t, kMaxSealedBytes> sealed{};
  sealed[0] = key.id;
  uint8_t* nonce = sealed.data() + 1;
  RandomBytesBuffered(nonce, kNonceBytes);
  std::array<uint8_t, kMaxPlainBytes> plain{};
  size_t plain_size = EncodePlain(token, plain.data());
  AssociatedData ad = MakeAssociatedData(kind, key.id);
  unsigned long long cipher_size = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(sealed.data() + 1 + kNonceBytes, &cipher_size,
                                             plain.data(), plain_size, ad.data(), ad.size(),
                                             nullptr, nonce, key.bytes.data());
  sodium_memzero(plain.data(), plain_size);
  size_t sealed_size = 1 + kNonceBytes + static_cast<size_t>(cipher_size);
  return Base64UrlEncode(sealed.data(), sealed_size);
}

std::optional<IdentityToken> UnsealToken(const KeyRing& keys, TokenKind kind,
                                         std::string_view value, int64_t now_seconds,
                                         int64_t max_age_seconds) {
  if (value.size() > MaxTokenChars(kMaxWalletsPerIdentity)) return std::nullopt;
  std::array<uint8_t, kMaxSealedBytes> sealed;
  ptrdiff_t decoded = Base64UrlDecode(value, sealed.data(), sealed.size());
  if (decoded < static_cast<ptrdiff_t>(kMinSealedBytes)) return std::nullopt;
  size_t sealed_size = static_cast<size_t>(decoded);
  const SealingKey* key = keys.Find(sealed[0]);
  if (key == nullptr) return std::nullopt;
  AssociatedData ad = MakeAssociatedData(kind, key->id);
  std::array<uint8_t, kMaxPlainBytes> plain;
  unsigned long long plain_size = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(
          plain.data(), &plain_size, nullptr, sealed.data() + 1 + kNonceBytes,
          sealed_size - 1 - kNonceBytes, ad.data(), ad.size(), sealed.data() + 1,
          key->bytes.data()) != 0) {
    return std::nullopt;
  }
  std::optional<IdentityToken> token(std::in_place);
  token->key_id = key->id;
  if (!DecodePlain(plain.data(), static_cast<size_t>(plain_size), *token)) return std::nullopt;
  if (token->sealed_at > now_seconds + kMaxClockSkewSeconds ||
      now_seconds - token->sealed_at > max_age_seconds) {
    return std::nullopt;
  }
  return token;
}

}  // namespace adserver::identity
