#include "identity/identity_service.h"

#include <sodium.h>

#include <algorithm>
#include <utility>

#include "common/check.h"
#include "common/crypto.h"
#include "common/log.h"

namespace adserver::identity {

Result<std::unique_ptr<IdentityService>> IdentityService::Create(store::IdentityStore* store,
                                                                 const Clock& clock,
                                                                 const IdentityOptions& options) {
  if (!InitCrypto()) return InternalError("libsodium cannot be initialised");
  std::optional<KeyRing> keys;
  if (options.keys.empty()) {
    ADS_LOG(warn,
            "no identity keys configured (ADSERVER_IDENTITY_KEYS[_FILE]); using a random "
            "key: identity cookies will not survive a restart");
    keys = KeyRing::Random();
  } else {
    ADS_ASSIGN_OR_RETURN(KeyRing parsed, KeyRing::Parse(options.keys));
    keys = std::move(parsed);
  }
  return std::unique_ptr<IdentityService>(
      new IdentityService(store, clock, options, std::move(*keys)));
}

IdentityService::IdentityService(store::IdentityStore* store, const Clock& clock,
                                 const IdentityOptions& options, KeyRing keys)
    : store_(store),
      clock_(clock),
      options_(options),
      keys_(std::move(keys)),
      graph_(options.retention_seconds) {}

IdentityService::~IdentityService() { Stop(); }

store::IdentityKey IdentityService::NewKey() {
  store::IdentityKey key;
  randombytes_buf(key.data(), key.size());
  return key;
}

Status IdentityService::Load() {
  if (store_ == nullptr) return OkStatus();
  size_t n = 0;
  ADS_RETURN_IF_ERROR(store_->ScanIdentities(clock_.NowSeconds() - options_.retention_seconds,
                                             [&](store::IdentityRecord&& r) {
                                               graph_.Load(std::move(r));
                                               ++n;
                                             }));
  ADS_LOG(info, "identities loaded", "count", n);
  return OkStatus();
}

void IdentityService::Start() {
  std::lock_guard<std::mutex> lock(thread_mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { Run(); });
}

void IdentityService::Stop() {
  {
    std::lock_guard<std::mutex> lock(thread_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  Status st = Flush();
  if (!st.ok()) ADS_LOG(error, "identity changes could not be written at shutdown", "status", st);
}

void IdentityService::Run() {
  auto next_sweep = std::chrono::steady_clock::now();  // sweep once soon after start
  std::unique_lock<std::mutex> lock(thread_mu_);
  while (!stopping_) {
    wake_.wait_for(lock, options_.flush_interval, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    Status st = Flush();
    if (!st.ok()) ADS_LOG(warn, "identity flush failed; will retry", "status", st);
    if (std::chrono::steady_clock::now() >= next_sweep) {
      Result<int64_t> swept = Sweep();
      if (!swept.ok()) ADS_LOG(warn, "identity retention sweep failed", "status", swept.status());
      next_sweep = std::chrono::steady_clock::now() + options_.sweep_interval;
    }
    lock.lock();
  }
}

Status IdentityService::Flush() {
  std::lock_guard<std::mutex> lock(flush_mu_);
  return FlushLocked();
}

Status IdentityService::FlushLocked() {
  std::vector<store::IdentityRecord> batch = graph_.TakeDirty();
  if (store_ == nullptr) return OkStatus();
  // Newer copies replace failed older ones of the same identity.
  for (store::IdentityRecord& r : batch) {
    auto same = std::find_if(pending_.begin(), pending_.end(),
                             [&](const store::IdentityRecord& p) { return p.key == r.key; });
    if (same != pending_.end()) {
      *same = std::move(r);
    } else {
      pending_.push_back(std::move(r));
    }
  }
  if (pending_.empty()) return OkStatus();
  ADS_RETURN_IF_ERROR(store_->PutIdentities(pending_));
  pending_.clear();
  return OkStatus();
}

Result<int64_t> IdentityService::Sweep() {
  std::lock_guard<std::mutex> lock(flush_mu_);
  int64_t now = clock_.NowSeconds();
  size_t in_memory = graph_.Sweep(now);
  if (store_ == nullptr) return static_cast<int64_t>(in_memory);
  ADS_ASSIGN_OR_RETURN(int64_t deleted,
                       store_->DeleteIdentitiesBefore(now - options_.retention_seconds));
  if (deleted > 0 || in_memory > 0) {
    ADS_LOG(info, "identity retention sweep", "deleted", deleted, "in_memory", in_memory);
  }
  return deleted;
}

Result<std::vector<store::IdentityRecord>> IdentityService::ForWallet(const Address& wallet) {
  std::lock_guard<std::mutex> lock(flush_mu_);
  if (store_ == nullptr) return graph_.ForWallet(wallet);
  ADS_RETURN_IF_ERROR(FlushLocked());
  return store_->IdentitiesForWallet(wallet);
}

Result<int64_t> IdentityService::EraseWallet(const Address& wallet) {
  std::lock_guard<std::mutex> lock(flush_mu_);
  int64_t removed = static_cast<int64_t>(graph_.EraseWallet(wallet));
  for (store::IdentityRecord& r : pending_) {
    std::erase_if(r.wallets,
                  [&](const store::IdentityWalletRecord& w) { return w.wallet == wallet; });
  }
  std::erase_if(pending_, [](const store::IdentityRecord& r) { return r.wallets.empty(); });
  if (store_ == nullptr) return removed;
  // Write what is pending first, so the store's erase is the last word on this wallet.
  ADS_RETURN_IF_ERROR(FlushLocked());
  ADS_ASSIGN_OR_RETURN(int64_t stored, store_->EraseWallet(wallet));
  return std::max(removed, stored);
}

}  // namespace adserver::identity
