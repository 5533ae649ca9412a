#include "common/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sodium.h>

#include <memory>

#include "common/address.h"
#include "common/check.h"

namespace adserver {
namespace {

// OpenSSL's SHA-256 uses the CPU's SHA extensions where present (about twice as fast as
// libsodium's portable code for a key). The algorithm is fetched once and each thread reuses
// one digest context, so hashing neither allocates nor looks the algorithm up.
const EVP_MD* Sha256Algorithm() {
  static const EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  ADS_CHECK(md != nullptr) << "OpenSSL has no SHA256";
  return md;
}

EVP_MD_CTX* ThreadDigestContext() {
  struct Free {
    void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
  };
  thread_local const std::unique_ptr<EVP_MD_CTX, Free> ctx(EVP_MD_CTX_new());
  ADS_CHECK(ctx != nullptr) << "cannot allocate an OpenSSL digest context";
  return ctx.get();
}

}  // namespace

bool InitCrypto() { return sodium_init() >= 0; }

Sha256Digest Sha256(std::string_view data) {
  Sha256Digest out;
  EVP_MD_CTX* ctx = ThreadDigestContext();
  unsigned int size = 0;
  bool ok = EVP_DigestInit_ex2(ctx, Sha256Algorithm(), nullptr) == 1 &&
            EVP_DigestUpdate(ctx, data.data(), data.size()) == 1 &&
            EVP_DigestFinal_ex(ctx, out.data(), &size) == 1;
  ADS_CHECK(ok && size == out.size()) << "OpenSSL SHA-256 failed";
  return out;
}

bool ConstantTimeEqual(const Sha256Digest& a, const Sha256Digest& b) {
  static_assert(sizeof(Sha256Digest) == crypto_verify_32_BYTES);
  return crypto_verify_32(a.data(), b.data()) == 0;
}

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
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
