#include "common/crypto.h"

#include <sodium.h>

#include "common/address.h"

namespace adserver {

bool InitCrypto() { return sodium_init() >= 0; }

Sha256Digest Sha256(std::string_view data) {
  Sha256Digest out;
  crypto_hash_sha256(out.data(), reinterpret_cast<const unsigned char*>(data.data()), data.size());
  return out;
}

bool ConstantTimeEqual(const Sha256Digest& a, const Sha256Digest& b) {
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string RandomAlphanumeric(size_t n) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string out(n, 'x');
  for (size_t i = 0; i < n; ++i) {
    out[i] = kAlphabet[randombytes_uniform(sizeof(kAlphabet) - 1)];
  }
  return out;
}

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  randombytes_buf(raw.data(), raw.size());
  return HexEncode(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
}

}  // namespace adserver
