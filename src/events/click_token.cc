#include "events/click_token.h"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "common/check.h"
#include "common/crypto.h"

namespace adserver::events {
namespace {

constexpr std::string_view kLabel = "adserver/click/v1";
constexpr size_t kIdBytes = 16;
constexpr size_t kTagBytes = crypto_aead_xchacha20poly1305_ietf_ABYTES;
constexpr size_t kNonceBytes = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
// Varints of six integers (10 bytes each at most), person (8), flags (1), two lengths (2 + 2).
constexpr size_t kMaxPlainBytes = 6 * 10 + 8 + 1 + 2 + 2 + kMaxTokenArmBytes + kMaxTokenAdUnitBytes;
constexpr size_t kMaxSealedBytes = 1 + kIdBytes + kMaxPlainBytes + kTagBytes;
constexpr size_t kMinSealedBytes = 1 + kIdBytes + kTagBytes + 6 + 8 + 1 + 2;

using AssociatedData = std::array<uint8_t, kLabel.size() + 1>;

AssociatedData MakeAssociatedData(uint8_t key_id) {
  AssociatedData ad{};
  std::memcpy(ad.data(), kLabel.data(), kLabel.size());
  ad[kLabel.size()] = key_id;
  return ad;
}

std::array<uint8_t, kNonceBytes> NonceFor(const uint8_t* id) {
  std::array<uint8_t, kNonceBytes> nonce{};
  std::memcpy(nonce.data(), id, kIdBytes);
  return nonce;
}

// Zig-zag LEB128: small magnitudes (ids, prices, times) take few bytes.
uint8_t* PutVarint(uint8_t* out, int64_t value) {
  uint64_t v = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  while (v >= 0x80) {
    *out++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<uint8_t>(v);
  return out;
}

bool GetVarint(const uint8_t*& in, const uint8_t* end, int64_t& value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in == end) return false;
    uint8_t byte = *in++;
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      value = static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
      return true;
    }
  }
  return false;
}

uint8_t* PutText(uint8_t* out, std::string_view text, size_t max) {
  size_t n = std::min(text.size(), max);
  *out++ = static_cast<uint8_t>(n >> 8);
  *out++ = static_cast<uint8_t>(n);
  std::memcpy(out, text.data(), n);
  return out + n;
}

bool GetText(const uint8_t*& in, const uint8_t* end, std::string& text) {
  if (end - in < 2) return false;
  size_t n = (static_cast<size_t>(in[0]) << 8) | in[1];
  in += 2;
  if (static_cast<size_t>(end - in) < n) return false;
  text.assign(reinterpret_cast<const char*>(in), n);
  in += n;
  return true;
}

// The sixth integer: 0, or bit 0 | milliseconds << 1 | user-agent hash << 11 | invalid << 43.
int64_t EncodeServeContext(const ClickClaims& c) {
  if (!c.serve_context) return 0;
  return 1 | (static_cast<int64_t>(c.served_at_millis % 1000) << 1) |
         (static_cast<int64_t>(c.user_agent_hash) << 11) |
         (static_cast<int64_t>(c.serve_invalid & 31) << 43);
}

bool DecodeServeContext(int64_t v, ClickClaims& c) {
  if (v == 0) return true;
  if ((v & 1) == 0 || v < 0 || (v >> 48) != 0) return false;
  c.serve_context = true;
  c.served_at_millis = static_cast<int32_t>((v >> 1) & 1023);
  c.user_agent_hash = static_cast<uint32_t>(v >> 11);
  c.serve_invalid = static_cast<uint8_t>((v >> 43) & 31);
  return c.served_at_millis < 1000;
}

size_t EncodePlain(const ClickClaims& c, uint8_t* plain) {
  uint8_t* out = plain;
  for (int64_t v :
       {c.publisher_id, c.campaign_id, c.ad_id, c.served_at, c.price, EncodeServeContext(c)}) {
    out = PutVarint(out, v);
  }
  for (int i = 0; i < 8; ++i) *out++ = static_cast<uint8_t>(c.person >> (8 * (7 - i)));
  *out++ = c.earlier_variant ? 1 : 0;
  out = PutText(out, c.arm, kMaxTokenArmBytes);
  out = PutText(out, c.ad_unit_id, kMaxTokenAdUnitBytes);
  return static_cast<size_t>(out - plain);
}

bool DecodePlain(const uint8_t* in, const uint8_t* end, ClickClaims& c) {
  int64_t serve_context = 0;
  for (int64_t* v :
       {&c.publisher_id, &c.campaign_id, &c.ad_id, &c.served_at, &c.price, &serve_context}) {
    if (!GetVarint(in, end, *v)) return false;
  }
  if (!DecodeServeContext(serve_context, c)) return false;
  if (end - in < 9) return false;
  c.person = 0;
  for (int i = 0; i < 8; ++i) c.person = (c.person << 8) | *in++;
  uint8_t flags = *in++;
  if (flags > 1) return false;
  c.earlier_variant = flags == 1;
  if (!GetText(in, end, c.arm) || !GetText(in, end, c.ad_unit_id)) return false;
  return in == end && c.arm.size() <= kMaxTokenArmBytes;
}

}  // namespace

uint32_t UserAgentHash(std::string_view user_agent) {
  uint32_t h = 2166136261u;
  for (char ch : user_agent) {
    h ^= static_cast<uint8_t>(ch);
    h *= 16777619u;
  }
  return h;
}

void SealClick(const identity::KeyRing& keys, const ClickClaims& claims, std::string& out) {
  ADS_CHECK(InitCrypto()) << "libsodium cannot be initialised";
  const identity::SealingKey& key = keys.active();
  std::array<uint8_t, kMaxSealedBytes> sealed;
  sealed[0] = key.id;
  std::memcpy(sealed.data() + 1, claims.decision.bytes.data(), kIdBytes);
  std::array<uint8_t, kMaxPlainBytes> plain;
  size_t plain_size = EncodePlain(claims, plain.data());
  AssociatedData ad = MakeAssociatedData(key.id);
  auto nonce = NonceFor(claims.decision.bytes.data());
  unsigned long long cipher_size = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(sealed.data() + 1 + kIdBytes, &cipher_size,
                                             plain.data(), plain_size, ad.data(), ad.size(),
                                             nullptr, nonce.data(), key.bytes.data());
  out += Base64UrlEncode(sealed.data(), 1 + kIdBytes + static_cast<size_t>(cipher_size));
}

std::string SealClick(const identity::KeyRing& keys, const ClickClaims& claims) {
  std::string out;
  SealClick(keys, claims, out);
  return out;
}

std::optional<ClickClaims> OpenClick(const identity::KeyRing& keys, std::string_view token) {
  ADS_CHECK(InitCrypto()) << "libsodium cannot be initialised";
  std::array<uint8_t, kMaxSealedBytes> sealed;
  ptrdiff_t decoded = Base64UrlDecode(token, sealed.data(), sealed.size());
  if (decoded < static_cast<ptrdiff_t>(kMinSealedBytes)) return std::nullopt;
  const identity::SealingKey* key = keys.Find(sealed[0]);
  if (key == nullptr) return std::nullopt;
  AssociatedData ad = MakeAssociatedData(key->id);
  auto nonce = NonceFor(sealed.data() + 1);
  std::array<uint8_t, kMaxPlainBytes> plain;
  unsigned long long plain_size = 0;
  size_t cipher_size = static_cast<size_t>(decoded) - 1 - kIdBytes;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(
          plain.data(), &plain_size, nullptr, sealed.data() + 1 + kIdBytes, cipher_size, ad.data(),
          ad.size(), nonce.data(), key->bytes.data()) != 0) {
    return std::nullopt;
  }
  ClickClaims claims;
  std::memcpy(claims.decision.bytes.data(), sealed.data() + 1, kIdBytes);
  if (!DecodePlain(plain.data(), plain.data() + plain_size, claims)) return std::nullopt;
  return claims;
}

}  // namespace adserver::events
