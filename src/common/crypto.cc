#include "common/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sodium.h>

#include <array>
#include <cstring>
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

// sodium_init takes a lock on every call: once per process is enough.
bool InitCrypto() {
  static const bool ok = sodium_init() >= 0;
  return ok;
}

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

namespace adserver {

void RandomBytesBuffered(uint8_t* out, size_t size) {
  constexpr size_t kBufferBytes = 4096;
  ADS_CHECK(size <= 256) << "RandomBytesBuffered is for nonces and ids";
  struct Buffer {
    std::array<uint8_t, kBufferBytes> bytes;
    size_t used = kBufferBytes;
    ~Buffer() { sodium_memzero(bytes.data(), bytes.size()); }
  };
  thread_local Buffer buffer;
  if (kBufferBytes - buffer.used < size) {
    randombytes_buf(buffer.bytes.data(), buffer.bytes.size());
    buffer.used = 0;
  }
  std::memcpy(out, buffer.bytes.data() + buffer.used, size);
  sodium_memzero(buffer.bytes.data() + buffer.used, size);  // each byte is handed out once
  buffer.used += size;
}

std::string Base64UrlEncode(const uint8_t* data, size_t size) {
  std::string out(4 * ((size + 2) / 3) + 1, '\0');  // padded, plus OpenSSL's NUL
  int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(size));
  out.resize(static_cast<size_t>(n));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

ptrdiff_t Base64UrlDecode(std::string_view text, uint8_t* out, size_t capacity) {
  // The longest input decoded on the stack; longer values are not ours anyway.
  constexpr size_t kMaxChars = 4096;
  size_t rem = text.size() % 4;
  if (rem == 1 || text.size() > kMaxChars) return -1;
  size_t padding = rem == 0 ? 0 : 4 - rem;
  size_t decoded = text.size() / 4 * 3 + (rem == 0 ? 0 : rem - 1);
  if (decoded > capacity) return -1;
  if (text.empty()) return 0;
  char standard[kMaxChars + 4];
  std::memcpy(standard, text.data(), text.size());
  std::memcpy(standard + text.size(), "===", padding);
  for (size_t i = 0; i < text.size(); ++i) {
    char& c = standard[i];
    // EVP_DecodeBlock would accept these (standard alphabet, padding, whitespace).
    if (c == '+' || c == '/' || c == '=' || c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      return -1;
    }
    c = c == '-' ? '+' : c == '_' ? '/' : c;
  }
  size_t total = text.size() + padding;
  unsigned char buffer[kMaxChars / 4 * 3 + 3];
  if (EVP_DecodeBlock(buffer, reinterpret_cast<const unsigned char*>(standard),
                      static_cast<int>(total)) < 0) {
    return -1;
  }
  // Canonical form only: the unused low bits of the last character must be zero, so that one
  // value has exactly one encoding.
  if (rem != 0) {
    char c = standard[text.size() - 1];
    int v = c >= 'A' && c <= 'Z'   ? c - 'A'
            : c >= 'a' && c <= 'z' ? c - 'a' + 26
            : c >= '0' && c <= '9' ? c - '0' + 52
            : c == '+'             ? 62
                                   : 63;
    int unused_bits = rem == 2 ? 4 : 2;
    if ((v & ((1 << unused_bits) - 1)) != 0) return -1;
  }
  std::memcpy(out, buffer, decoded);
  return static_cast<ptrdiff_t>(decoded);
}

}  // namespace adserver
