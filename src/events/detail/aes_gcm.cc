#include "events/detail/aes_gcm.h"

#include <openssl/evp.h>
#include <sodium.h>

#include <memory>

#include "common/check.h"
#include "common/crypto.h"

namespace adserver::events::detail {
namespace {

static_assert(sizeof(crypto_aead_aes256gcm_state) == 512);

crypto_aead_aes256gcm_state* SodiumState(std::array<uint8_t, 512>& raw) {
  return reinterpret_cast<crypto_aead_aes256gcm_state*>(raw.data());
}
const crypto_aead_aes256gcm_state* SodiumState(const std::array<uint8_t, 512>& raw) {
  return reinterpret_cast<const crypto_aead_aes256gcm_state*>(raw.data());
}

struct CipherCtxFree {
  void operator()(EVP_CIPHER_CTX* ctx) const { EVP_CIPHER_CTX_free(ctx); }
};

// One OpenSSL context per thread, re-keyed for every call (OpenSSL's path is the fallback).
EVP_CIPHER_CTX* ThreadCipherCtx() {
  thread_local std::unique_ptr<EVP_CIPHER_CTX, CipherCtxFree> ctx(EVP_CIPHER_CTX_new());
  ADS_CHECK(ctx != nullptr) << "OpenSSL cannot allocate a cipher context";
  return ctx.get();
}

int Int(size_t n) { return static_cast<int>(n); }

bool OpenSslSeal(const std::array<uint8_t, kGcmKeyBytes>& key, const uint8_t* nonce,
                 std::span<const uint8_t> ad, std::span<const uint8_t> plain, uint8_t* out) {
  EVP_CIPHER_CTX* ctx = ThreadCipherCtx();
  int n = 0;
  return EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key.data(), nonce) == 1 &&
         EVP_EncryptUpdate(ctx, nullptr, &n, ad.data(), Int(ad.size())) == 1 &&
         EVP_EncryptUpdate(ctx, out, &n, plain.data(), Int(plain.size())) == 1 &&
         EVP_EncryptFinal_ex(ctx, out + plain.size(), &n) == 1 &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, Int(kGcmTagBytes), out + plain.size()) == 1;
}

bool OpenSslOpen(const std::array<uint8_t, kGcmKeyBytes>& key, const uint8_t* nonce,
                 std::span<const uint8_t> ad, std::span<const uint8_t> sealed, uint8_t* out) {
  const size_t cipher_size = sealed.size() - kGcmTagBytes;
  // OpenSSL takes the expected tag through a non-const pointer; it only reads it.
  std::array<uint8_t, kGcmTagBytes> tag;
  std::copy(sealed.begin() + static_cast<ptrdiff_t>(cipher_size), sealed.end(), tag.begin());
  EVP_CIPHER_CTX* ctx = ThreadCipherCtx();
  int n = 0;
  return EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key.data(), nonce) == 1 &&
         EVP_DecryptUpdate(ctx, nullptr, &n, ad.data(), Int(ad.size())) == 1 &&
         EVP_DecryptUpdate(ctx, out, &n, sealed.data(), Int(cipher_size)) == 1 &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, Int(kGcmTagBytes), tag.data()) == 1 &&
         EVP_DecryptFinal_ex(ctx, out + cipher_size, &n) == 1;
}

}  // namespace

GcmBackend DefaultGcmBackend() {
  static const GcmBackend backend = [] {
    ADS_CHECK(InitCrypto()) << "libsodium cannot be initialised";
    return crypto_aead_aes256gcm_is_available() == 1 ? GcmBackend::kSodium : GcmBackend::kOpenSsl;
  }();
  return backend;
}

AesGcm::AesGcm(const std::array<uint8_t, kGcmKeyBytes>& key, GcmBackend backend)
    : backend_(backend), key_(key) {
  if (backend_ == GcmBackend::kSodium) {
    ADS_CHECK(InitCrypto() && crypto_aead_aes256gcm_is_available() == 1)
        << "libsodium's AES-256-GCM needs AES-NI and PCLMUL";
    crypto_aead_aes256gcm_beforenm(SodiumState(state_), key_.data());
  }
}

AesGcm::~AesGcm() {
  sodium_memzero(key_.data(), key_.size());
  sodium_memzero(state_.data(), state_.size());
}

bool AesGcm::Seal(std::span<const uint8_t, kGcmNonceBytes> nonce, std::span<const uint8_t> ad,
                  std::span<const uint8_t> plain, uint8_t* out) const {
  if (backend_ == GcmBackend::kOpenSsl) return OpenSslSeal(key_, nonce.data(), ad, plain, out);
  unsigned long long mac_size = 0;
  return crypto_aead_aes256gcm_encrypt_detached_afternm(
             out, out + plain.size(), &mac_size, plain.data(), plain.size(), ad.data(), ad.size(),
             nullptr, nonce.data(), SodiumState(state_)) == 0;
}

bool AesGcm::Open(std::span<const uint8_t, kGcmNonceBytes> nonce, std::span<const uint8_t> ad,
                  std::span<const uint8_t> sealed, uint8_t* out) const {
  if (sealed.size() < kGcmTagBytes) return false;
  if (backend_ == GcmBackend::kOpenSsl) return OpenSslOpen(key_, nonce.data(), ad, sealed, out);
  const size_t cipher_size = sealed.size() - kGcmTagBytes;
  return crypto_aead_aes256gcm_decrypt_detached_afternm(
             out, nullptr, sealed.data(), cipher_size, sealed.data() + cipher_size, ad.data(),
             ad.size(), nonce.data(), SodiumState(state_)) == 0;
}

}  // namespace adserver::events::detail
