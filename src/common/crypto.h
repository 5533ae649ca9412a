#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace adserver {

using Sha256Digest = std::array<uint8_t, 32>;

// Initialises libsodium; safe to call many times from any thread. Returns false if the
// library cannot be initialised (then nothing here may be used).
bool InitCrypto();

// SHA-256 of `data` (OpenSSL). Thread-safe; allocates nothing after a thread's first call.
Sha256Digest Sha256(std::string_view data);

// Constant-time equality of two digests (libsodium crypto_verify_32).
bool ConstantTimeEqual(const Sha256Digest& a, const Sha256Digest& b);
// Equality of two byte strings in time that depends only on their lengths (OpenSSL
// CRYPTO_memcmp); strings of different lengths are unequal.
bool ConstantTimeEqual(std::string_view a, std::string_view b);

// `n` cryptographically random characters from [A-Za-z0-9] (unbiased).
std::string RandomAlphanumeric(size_t n);

// A random token of `bytes` random bytes, hex encoded.
std::string RandomHex(size_t bytes);

struct DigestHash {
  size_t operator()(const Sha256Digest& d) const noexcept {
    size_t h;
    static_assert(sizeof h <= 32);
    __builtin_memcpy(&h, d.data(), sizeof h);
    return h;
  }
};

}  // namespace adserver
