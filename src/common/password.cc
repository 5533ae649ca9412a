#include "common/password.h"

#include <sodium.h>

#include <string>

namespace adserver {

PasswordHashOptions MinimalPasswordHashOptionsForTest() {
  return PasswordHashOptions{.ops_limit = crypto_pwhash_OPSLIMIT_MIN,
                             .mem_limit = crypto_pwhash_MEMLIMIT_MIN};
}

Result<std::string> HashPassword(std::string_view password, const PasswordHashOptions& options) {
  if (sodium_init() < 0) return InternalError("libsodium cannot be initialised");
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str(out, password.data(), password.size(), options.ops_limit,
                        options.mem_limit) != 0) {
    return InternalError("password hashing ran out of memory");
  }
  return std::string(out);
}

bool VerifyPassword(std::string_view hash, std::string_view password) {
  if (sodium_init() < 0) return false;
  // crypto_pwhash_str_verify wants a NUL-terminated string of at most STRBYTES.
  if (hash.empty() || hash.size() >= crypto_pwhash_STRBYTES) return false;
  std::string terminated(hash);
  return crypto_pwhash_str_verify(terminated.c_str(), password.data(), password.size()) == 0;
}

}  // namespace adserver
