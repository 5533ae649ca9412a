#include "events/click_token.h"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <span>

#include "common/check.h"
#include "common/crypto.h"
#include "events/detail/aes_gcm.h"

namespace adserver::events {
namespace {

constexpr size_t kIdBytes = 16;
// Varints of six integers (10 bytes each at most), person (8), flags (1), two lengths (2 + 2).
constexpr size_t kMaxPlainBytes = 6 * 10 + 8 + 1 + 2 + 2 + kMaxTokenArmBytes + kMaxTokenAdUnitBytes;
constexpr size_t kMinPlainBytes = 6 + 8 + 1 + 2 + 2;

// Format 2 (AES-256-GCM): key id | decision id | nonce | ciphertext | tag.
constexpr std::string_view kLabel = "adserver/click/v2";
constexpr size_t kNonceOffset = 1 + kIdBytes;
constexpr size_t kCipherOffset = kNonceOffset + detail::kGcmNonceBytes;
constexpr size_t kMaxSealedBytes = kCipherOffset + kMaxPlainBytes + detail::kGcmTagBytes;
constexpr size_t kMinSealedBytes = kCipherOffset + kMinPlainBytes + detail::kGcmTagBytes;

// Format 1 (XChaCha20-Poly1305, tokens sealed before format 2): key id | decision id (also the
// nonce) | ciphertext | tag. Still opened, so that tokens in flight across an upgrade work.
constexpr std::string_view kLabelV1 = "adserver/click/v1";
constexpr size_t kTagBytesV1 = crypto_aead_xchacha20poly1305_ietf_ABYTES;
constexpr size_t kNonceBytesV1 = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
constexpr size_t kMaxSealedBytesV1 = 1 + kIdBytes + kMaxPlainBytes + kTagBytesV1;
constexpr size_t kMinSealedBytesV1 = 1 + kIdBytes + kTagBytesV1 + kMinPlainBytes;
static_assert(kMaxSealedBytesV1 <= kMaxSealedBytes);

// Format 2 authenticates the key id and the decision id along with the sealed claims.
using AssociatedData = std::array<uint8_t, kLabel.size() + 1 + kIdBytes>;

AssociatedData MakeAssociatedData(uint8_t key_id, const uint8_t* id) {
  AssociatedData ad{};
  std::memcpy(ad.data(), kLabel.data(), kLabel.size());
  ad[kLabel.size()] = key_id;
  std::memcpy(ad.data() + kLabel.size() + 1, id, kIdBytes);
  return ad;
}

using AssociatedDataV1 = std::array<uint8_t, kLabelV1.size() + 1>;

AssociatedDataV1 MakeAssociatedDataV1(uint8_t key_id) {
  AssociatedDataV1 ad{};
  std::memcpy(ad.data(), kLabelV1.data(), kLabelV1.size());
  ad[kLabelV1.size()] = key_id;
  return ad;
}

std::array<uint8_t, kNonceBytesV1> NonceForV1(const uint8_t* id) {
  std::array<uint8_t, kNonceBytesV1> nonce{};
  std::memcpy(nonce.data(), id, kIdBytes);
  return nonce;
}

// The AES-256-GCM key of a ring key: BLAKE2b keyed with the ring key over a label, so the ring
// key itself never keys two ciphers. Each thread keeps the last two keys it used, prepared
// (libsodium expands the key schedule once): sealing uses the active key on every 200.
const detail::AesGcm& GcmFor(const identity::SealingKey& key) {
  struct Slot {
    uint8_t id = 0;
    std::array<uint8_t, 32> source{};
    std::unique_ptr<detail::AesGcm> gcm;
    ~Slot() { sodium_memzero(source.data(), source.size()); }  // the thread's copy of a key
  };
  thread_local std::array<Slot, 2> slots;
  thread_local size_t next = 0;
  for (const Slot& slot : slots) {
    if (slot.gcm != nullptr && slot.id == key.id && slot.source == key.bytes) return *slot.gcm;
  }
  constexpr std::string_view kKeyLabel = "adserver/click/aes-256-gcm";
  std::array<uint8_t, detail::kGcmKeyBytes> derived;
  crypto_generichash(derived.data(), derived.size(),
                     reinterpret_cast<const unsigned char*>(kKeyLabel.data()), kKeyLabel.size(),
                     key.bytes.data(), key.bytes.size());
  Slot& slot = slots[next];
  next = (next + 1) % slots.size();
  slot.id = key.id;
  slot.source = key.bytes;
  slot.gcm = std::make_unique<detail::AesGcm>(derived, detail::DefaultGcmBackend());
  sodium_memzero(derived.data(), derived.size());
  return *slot.gcm;
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
  // A random nonce: two tokens under one key share one with probability n^2 / 2^97 after n
  // tokens (6.5e-5 after a year at 100,000 a second); rotate keys well before that.
  RandomBytesBuffered(sealed.data() + kNonceOffset, detail::kGcmNonceBytes);
  std::array<uint8_t, kMaxPlainBytes> plain;
  size_t plain_size = EncodePlain(claims, plain.data());
  AssociatedData ad = MakeAssociatedData(key.id, claims.decision.bytes.data());
  ADS_CHECK(GcmFor(key).Seal(std::span<const uint8_t, detail::kGcmNonceBytes>(
                                 sealed.data() + kNonceOffset, detail::kGcmNonceBytes),
                             ad, std::span<const uint8_t>(plain.data(), plain_size),
                             sealed.data() + kCipherOffset))
      << "AES-256-GCM failed";
  sodium_memzero(plain.data(), plain_size);
  out += Base64UrlEncode(sealed.data(), kCipherOffset + plain_size + detail::kGcmTagBytes);
}

std::string SealClick(const identity::KeyRing& keys, const ClickClaims& claims) {
  std::string out;
  SealClick(keys, claims, out);
  return out;
}

namespace {

// A format 2 token's claims (plain_size set), or false.
bool OpenV2(const identity::KeyRing& keys, const uint8_t* sealed, size_t size, uint8_t* plain,
            size_t& plain_size) {
  if (size < kMinSealedBytes) return false;
  const identity::SealingKey* key = keys.Find(sealed[0]);
  if (key == nullptr) return false;
  AssociatedData ad = MakeAssociatedData(key->id, sealed + 1);
  plain_size = size - kCipherOffset - detail::kGcmTagBytes;
  return GcmFor(*key).Open(
      std::span<const uint8_t, detail::kGcmNonceBytes>(sealed + kNonceOffset,
                                                       detail::kGcmNonceBytes),
      ad, std::span<const uint8_t>(sealed + kCipherOffset, size - kCipherOffset), plain);
}

bool OpenV1(const identity::KeyRing& keys, const uint8_t* sealed, size_t size, uint8_t* plain,
            size_t& plain_size) {
  if (size < kMinSealedBytesV1 || size > kMaxSealedBytesV1) return false;
  const identity::SealingKey* key = keys.Find(sealed[0]);
  if (key == nullptr) return false;
  AssociatedDataV1 ad = MakeAssociatedDataV1(key->id);
  auto nonce = NonceForV1(sealed + 1);
  unsigned long long opened = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain, &opened, nullptr, sealed + 1 + kIdBytes,
                                                 size - 1 - kIdBytes, ad.data(), ad.size(),
                                                 nonce.data(), key->bytes.data()) != 0) {
    return false;
  }
  plain_size = static_cast<size_t>(opened);
  return true;
}

}  // namespace

std::optional<ClickClaims> OpenClick(const identity::KeyRing& keys, std::string_view token) {
  ADS_CHECK(InitCrypto()) << "libsodium cannot be initialised";
  std::array<uint8_t, kMaxSealedBytes> sealed;
  ptrdiff_t decoded = Base64UrlDecode(token, sealed.data(), sealed.size());
  if (decoded <= 0) return std::nullopt;
  const auto size = static_cast<size_t>(decoded);
  std::array<uint8_t, kMaxPlainBytes> plain;
  size_t plain_size = 0;
  if (!OpenV2(keys, sealed.data(), size, plain.data(), plain_size) &&
      !OpenV1(keys, sealed.data(), size, plain.data(), plain_size)) {
    return std::nullopt;
  }
  ClickClaims claims;
  std::memcpy(claims.decision.bytes.data(), sealed.data() + 1, kIdBytes);
  if (!DecodePlain(plain.data(), plain.data() + plain_size, claims)) return std::nullopt;
  return claims;
}

}  // namespace adserver::events
