#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/published.h"
#include "common/status.h"
#include "identity/erasure_list.h"
#include "identity/key_ring.h"
#include "identity/options.h"
#include "identity/wallet_token.h"
#include "store/identity_store.h"

namespace adserver::identity {

// Identity without server-side identity state: opens and seals identity tokens (cookies and
// localIds, identity/wallet_token.h) and keeps the erasure list that reaches tokens already
// issued.
//
// Serving (Open/Seal) takes no lock, does no I/O and allocates only the sealed string: the
// erasure list is an immutable snapshot (Published<ErasureList>). Nothing a request does is
// written anywhere, so nothing queues behind identity and shutdown has nothing to flush.
// The erasure list is persisted in an IdentityStore; a background thread picks up erasures
// written by other processes (the CLI) every `flush_interval` and prunes erasures older than
// the retention period every `sweep_interval`. Thread-safe.
class IdentityService {
 public:
  // Parses the key ring (a random one when options.keys is empty). `store` (may be null: the
  // erasure list then lives in memory only) and `clock` must outlive the service.
  static Result<std::unique_ptr<IdentityService>> Create(store::IdentityStore* store,
                                                         const Clock& clock,
                                                         const IdentityOptions& options);
  ~IdentityService();

  // Reads the digest key and the erasure list from the store.
  Status Load();
  // Starts the sync/prune thread.
  void Start();
  // Stops the thread (within one store call). Idempotent; nothing is pending.
  void Stop();
  // Applies erasures stored since the last sync (by any process) now.
  Status Sync();
  // Forgets erasures older than the retention period, in memory and in the store. Returns
  // how many went from the store (from memory when there is none).
  Result<int64_t> Prune();

  // A token that opened: its live wallets (retention and erasures applied, at least one).
  // `reseal` says it should be re-sealed.
  struct Opened {
    IdentityToken token;
    // Links were dropped (expired or erased), or the value is sealed under a key that is no
    // longer active: re-seal so the client stops carrying them / moves to the active key.
    bool reseal = false;
  };
  // Serving path (any thread). nullopt when `value` is no live token of `kind` (see
  // UnsealToken; a cookie lives cookie_max_age_seconds, a localId retention_seconds) or has no
  // live wallet left.
  std::optional<Opened> Open(TokenKind kind, std::string_view value, int64_t now) const;
  // Seals `token` (sets sealed_at = now and key_id) under the active key.
  std::string Seal(TokenKind kind, IdentityToken& token, int64_t now) const;
  // A fresh random identity id.
  static IdentityId NewId();

  // The key ring in use now (a snapshot; ReplaceKeys publishes another).
  std::shared_ptr<const KeyRing> keys() const { return keys_.Current(); }
  // Makes `keys` the ring tokens are sealed and opened with (SIGHUP reload). Tokens sealed under
  // a key that `keys` no longer holds stop opening; keep retired keys in the ring while their
  // tokens live. Thread-safe.
  void ReplaceKeys(KeyRing keys);
  const IdentityOptions& options() const { return options_; }
  // Name of the partitioned (CHIPS) twin of the identity cookie: `<cookie_name>_p`.
  const std::string& twin_cookie_name() const { return twin_cookie_name_; }

  // Admin (worker threads): erases `wallet` from every token issued so far, durably (stored
  // before it returns) and at once for this process's serving path. Returns the stored record.
  Result<store::ErasureRecord> EraseWallet(const Address& wallet);
  // When `wallet` was erased (within the retention period), or nullopt.
  std::optional<int64_t> ErasedAt(const Address& wallet) const;
  size_t erasure_count() const;

 private:
  IdentityService(store::IdentityStore* store, const Clock& clock, const IdentityOptions& options,
                  KeyRing keys);
  Status SyncLocked() ADS_REQUIRES(mu_);
  // Publishes `list` as the erasure list (or the constructor does).
  void PublishErasures(std::shared_ptr<const ErasureList> list) ADS_REQUIRES(mu_);
  void Run();

  store::IdentityStore* const store_;
  const Clock& clock_;
  const IdentityOptions options_;
  Published<KeyRing> keys_;
  const std::string twin_cookie_name_;
  Published<ErasureList> erasures_;
  // Size of the published erasure list, so that Open skips taking the snapshot while it is
  // empty (the common case). Updated after each Publish.
  std::atomic<size_t> erasure_count_{0};

  // Serialises the writers of erasures_ (load, sync, erase, prune).
  Mutex mu_;

  Mutex thread_mu_;
  CondVar wake_;
  bool stopping_ ADS_GUARDED_BY(thread_mu_) = false;
  std::thread thread_;
};

}  // namespace adserver::identity
