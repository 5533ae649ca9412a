#pragma once

// AES-256-GCM for short messages (click tokens) with two interchangeable implementations:
// libsodium's (AES-NI and PCLMUL, its key schedule expanded once per key) where the CPU has
// them, OpenSSL's everywhere else. Both compute the same standard AES-256-GCM (12-byte nonce,
// 16-byte tag), so a value sealed by one opens with the other: nodes of one cluster may run on
// different CPUs.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace adserver::events::detail {

inline constexpr size_t kGcmKeyBytes = 32;
inline constexpr size_t kGcmNonceBytes = 12;
inline constexpr size_t kGcmTagBytes = 16;

enum class GcmBackend : uint8_t { kSodium, kOpenSsl };

// libsodium where this CPU supports its AES-GCM, else OpenSSL.
GcmBackend DefaultGcmBackend();

// One AES-256-GCM key, prepared for one backend. Not copyable (libsodium's state is large and
// aligned); keep one per key and thread.
class AesGcm {
 public:
  AesGcm(const std::array<uint8_t, kGcmKeyBytes>& key, GcmBackend backend);
  ~AesGcm();
  AesGcm(const AesGcm&) = delete;
  AesGcm& operator=(const AesGcm&) = delete;

  GcmBackend backend() const { return backend_; }

  // Writes `plain.size()` bytes of ciphertext then the tag to `out` (which must hold
  // plain.size() + kGcmTagBytes). False only if the library fails.
  bool Seal(std::span<const uint8_t, kGcmNonceBytes> nonce, std::span<const uint8_t> ad,
            std::span<const uint8_t> plain, uint8_t* out) const;
  // Opens ciphertext-then-tag `sealed` into `out` (sealed.size() - kGcmTagBytes bytes). False
  // for a wrong tag (anything forged or tampered with) or a value shorter than the tag.
  bool Open(std::span<const uint8_t, kGcmNonceBytes> nonce, std::span<const uint8_t> ad,
            std::span<const uint8_t> sealed, uint8_t* out) const;

 private:
  GcmBackend backend_;
  std::array<uint8_t, kGcmKeyBytes> key_;
  // libsodium's crypto_aead_aes256gcm_state (kSodium only), kept opaque here.
  alignas(16) std::array<uint8_t, 512> state_{};
};

}  // namespace adserver::events::detail
