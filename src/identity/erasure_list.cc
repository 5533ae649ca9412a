#include "identity/erasure_list.h"

#include <sodium.h>

namespace adserver::identity {

uint64_t ErasureList::Digest(const store::ErasureDigestKey& key, const Address& wallet) {
  static_assert(crypto_shorthash_KEYBYTES == sizeof(store::ErasureDigestKey));
  static_assert(crypto_shorthash_BYTES == sizeof(uint64_t));
  unsigned char out[crypto_shorthash_BYTES];
  crypto_shorthash(out, wallet.bytes.data(), wallet.bytes.size(), key.data());
  uint64_t digest = 0;
  for (unsigned char b : out) digest = (digest << 8) | b;
  return digest;
}

std::optional<int64_t> ErasureList::ErasedAt(const Address& wallet) const {
  if (entries_.empty()) return std::nullopt;
  auto it = entries_.find(Digest(wallet));
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

size_t ErasureList::Apply(WalletLinks& links) const {
  if (entries_.empty()) return 0;
  return links.RemoveIf([this](const WalletLink& link) {
    std::optional<int64_t> erased_at = ErasedAt(link.wallet);
    return erased_at && link.last_seen <= *erased_at;
  });
}

}  // namespace adserver::identity
