#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "common/status.h"

namespace adserver::store {

// Key of the keyed 64-bit wallet digest (SipHash-2-4) erasures are recorded under; one per
// installation, so digests mean nothing without the database they sit in.
using ErasureDigestKey = std::array<uint8_t, 16>;

struct ErasureRecord {
  uint64_t digest = 0;    // keyed digest of the erased wallet (never the address itself)
  int64_t erased_at = 0;  // Unix seconds
  int64_t seq = 0;        // increases with every Put; later erasures have larger numbers
};

// Persistence of the identity erasure list. Identities themselves are not stored: they live
// in sealed cookies and localIds (identity/wallet_token.h), so this holds only what an
// operator erased. Implementations are thread-safe; every call may block on I/O, so callers
// run them on background or admin worker threads, never on an event loop.
// Errors: Unavailable when the backend cannot be reached or is busy; Internal otherwise.
class IdentityStore {
 public:
  virtual ~IdentityStore() = default;

  // The installation's digest key: the stored one, or `candidate` once stored when there is
  // none yet (the first caller wins; every later call returns the same key).
  virtual Result<ErasureDigestKey> DigestKey(const ErasureDigestKey& candidate) = 0;
  // Records the erasure of `digest` at `erased_at` (a repeat re-dates it), durably before it
  // returns. Returns the record as stored, with its new sequence number.
  virtual Result<ErasureRecord> PutErasure(uint64_t digest, int64_t erased_at) = 0;
  // Streams every erasure with seq > `after_seq`, in seq order.
  virtual Status ScanErasures(int64_t after_seq,
                              const std::function<void(const ErasureRecord&)>& fn) = 0;
  // Retention: deletes erasures dated before `cutoff`. Returns how many went.
  virtual Result<int64_t> DeleteErasuresBefore(int64_t cutoff) = 0;
};

}  // namespace adserver::store
