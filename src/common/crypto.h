#pragma once

#include <array>
#include <cstddef>
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

// Fills `out` with `size` random bytes (at most 256) from a per-thread buffer of libsodium's
// randombytes, refilled 4 KiB at a time: one getrandom() call per ~170 nonces instead of one
// each, for nonces and ids on the serving path. A forked child must not use it before exec
// (it would repeat its parent's buffered bytes); the server never forks.
void RandomBytesBuffered(uint8_t* out, size_t size);

// A random token of `bytes` random bytes, hex encoded.
std::string RandomHex(size_t bytes);

// Base64url without padding (RFC 4648 section 5) of `size` bytes, table-driven (OpenSSL): for
// public values such as sealed cookies, not for secrets (not constant-time).
std::string Base64UrlEncode(const uint8_t* data, size_t size);
// Decodes unpadded base64url into `out` (at most `capacity` bytes) and returns the byte count,
// or -1 for anything else: another alphabet ('+', '/'), padding, whitespace, a length that is
// not a base64 length, or more than `capacity` bytes. Allocates nothing.
ptrdiff_t Base64UrlDecode(std::string_view text, uint8_t* out, size_t capacity);

struct DigestHash {
  size_t operator()(const Sha256Digest& d) const noexcept {
    size_t h;
    static_assert(sizeof h <= 32);
    __builtin_memcpy(&h, d.data(), sizeof h);
    return h;
  }
};

}  // namespace adserver
