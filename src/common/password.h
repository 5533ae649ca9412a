#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace adserver {

// Cost of one argon2id password hash (libsodium crypto_pwhash_str). The defaults are
// libsodium's "interactive" limits (2 passes, 64 MiB, ~70 ms here); tests lower them.
struct PasswordHashOptions {
  // Passes over memory (crypto_pwhash_OPSLIMIT_*).
  unsigned long long ops_limit = 2;
  // Memory per hash in bytes (crypto_pwhash_MEMLIMIT_*).
  size_t mem_limit = size_t{64} << 20;
};

// Cheapest limits libsodium accepts, for unit tests only.
PasswordHashOptions MinimalPasswordHashOptionsForTest();

// The argon2id hash string of `password` ("$argon2id$v=19$m=...", salt included). Internal if
// libsodium runs out of memory. Thread-safe.
Result<std::string> HashPassword(std::string_view password, const PasswordHashOptions& options);

// True if `password` matches `hash` (a HashPassword result); false for a malformed hash.
// Takes the time of one hash with the limits stored in `hash`.
bool VerifyPassword(std::string_view hash, std::string_view password);

}  // namespace adserver
