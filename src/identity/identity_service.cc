#include "identity/identity_service.h"

#include <sodium.h>

#include <utility>

#include "common/check.h"
#include "common/crypto.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/thread_setup.h"

namespace adserver::identity {
namespace {

// Erasures are kept a minute longer than the links they can still reach (clock skew).
constexpr int64_t kEraseMarginSeconds = 60;

store::ErasureDigestKey RandomDigestKey() {
  store::ErasureDigestKey key;
  randombytes_buf(key.data(), key.size());
  return key;
}

}  // namespace

Result<std::unique_ptr<IdentityService>> IdentityService::Create(store::IdentityStore* store,
                                                                 const Clock& clock,
                                                                 const IdentityOptions& options) {
  if (!InitCrypto()) return InternalError("libsodium cannot be initialised");
  std::optional<KeyRing> keys;
  if (options.keys.empty()) {
    ADS_LOG(warn,
            "no identity keys configured (ADSERVER_IDENTITY_KEYS[_FILE]); using a random "
            "key: identity cookies and localIds will not survive a restart");
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
      twin_cookie_name_(options.cookie_name + "_p") {
  ReplaceKeys(std::move(keys));
  PublishErasures(std::make_shared<const ErasureList>(
      RandomDigestKey(), std::unordered_map<uint64_t, int64_t>{}, 0));
}

IdentityService::~IdentityService() { Stop(); }

void IdentityService::PublishErasures(std::shared_ptr<const ErasureList> list) {
  size_t size = list->size();
  erasures_.Publish(std::move(list));
  erasure_count_.store(size, std::memory_order_release);
}

IdentityId IdentityService::NewId() {
  IdentityId id;
  RandomBytesBuffered(id.data(), id.size());
  return id;
}

Status IdentityService::Load() {
  if (store_ == nullptr) return OkStatus();
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(store::ErasureDigestKey key, store_->DigestKey(RandomDigestKey()));
  PublishErasures(
      std::make_shared<const ErasureList>(key, std::unordered_map<uint64_t, int64_t>{}, 0));
  ADS_RETURN_IF_ERROR(SyncLocked());
  ADS_LOG(info, "identity erasure list loaded", "erasures", erasures_.Current()->size());
  return OkStatus();
}

void IdentityService::Start() {
  MutexLock lock(thread_mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] {
    NameThisThread("identity");
    LowerThisThreadPriority();
    Run();
  });
}

void IdentityService::Stop() {
  {
    MutexLock lock(thread_mu_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

void IdentityService::Run() {
  auto next_prune = std::chrono::steady_clock::now();  // once soon after start
  MutexLock lock(thread_mu_);
  while (!stopping_) {
    wake_.WaitFor(thread_mu_, options_.flush_interval,
                  [this]() ADS_REQUIRES(thread_mu_) { return stopping_; });
    if (stopping_) break;
    lock.Unlock();
    Status st = Sync();
    if (!st.ok()) ADS_LOG(warn, "identity erasure sync failed; will retry", "status", st);
    if (std::chrono::steady_clock::now() >= next_prune) {
      Result<int64_t> pruned = Prune();
      if (!pruned.ok()) ADS_LOG(warn, "identity erasure prune failed", "status", pruned.status());
      next_prune = std::chrono::steady_clock::now() + options_.sweep_interval;
    }
    lock.Lock();
  }
}

Status IdentityService::Sync() {
  if (store_ == nullptr) return OkStatus();
  MutexLock lock(mu_);
  return SyncLocked();
}

Status IdentityService::SyncLocked() {
  std::shared_ptr<const ErasureList> current = erasures_.Current();
  std::unordered_map<uint64_t, int64_t> added;
  int64_t last_seq = current->last_seq();
  ADS_RETURN_IF_ERROR(store_->ScanErasures(last_seq, [&](const store::ErasureRecord& r) {
    added[r.digest] = r.erased_at;
    last_seq = r.seq;
  }));
  if (added.empty()) return OkStatus();
  std::unordered_map<uint64_t, int64_t> entries = current->entries();
  for (const auto& [digest, erased_at] : added) entries[digest] = erased_at;
  PublishErasures(
      std::make_shared<const ErasureList>(current->key(), std::move(entries), last_seq));
  return OkStatus();
}

Result<int64_t> IdentityService::Prune() {
  MutexLock lock(mu_);
  int64_t cutoff = clock_.NowSeconds() - options_.retention_seconds - kEraseMarginSeconds;
  int64_t deleted = 0;
  if (store_ != nullptr) {
    ADS_ASSIGN_OR_RETURN(deleted, store_->DeleteErasuresBefore(cutoff));
  }
  std::shared_ptr<const ErasureList> current = erasures_.Current();
  std::unordered_map<uint64_t, int64_t> entries = current->entries();
  size_t in_memory = std::erase_if(entries, [&](const auto& e) { return e.second < cutoff; });
  if (in_memory > 0) {
    PublishErasures(std::make_shared<const ErasureList>(current->key(), std::move(entries),
                                                          current->last_seq()));
  }
  if (deleted > 0 || in_memory > 0) {
    ADS_LOG(info, "identity erasures past retention pruned", "stored", deleted, "in_memory",
            in_memory);
  }
  return store_ != nullptr ? deleted : static_cast<int64_t>(in_memory);
}

std::optional<IdentityService::Opened> IdentityService::Open(TokenKind kind, std::string_view value,
                                                             int64_t now) const {
  int64_t max_age =
      kind == TokenKind::kCookie ? options_.cookie_max_age_seconds : options_.retention_seconds;
  std::shared_ptr<const KeyRing> keys = keys_.Current();
  std::optional<IdentityToken> token = UnsealToken(*keys, kind, value, now, max_age);
  if (!token) return std::nullopt;
  int64_t cutoff = now - options_.retention_seconds;
  size_t dropped =
      token->wallets.RemoveIf([cutoff](const WalletLink& l) { return l.last_seen < cutoff; });
  if (erasure_count_.load(std::memory_order_acquire) != 0) {
    dropped += erasures_.Current()->Apply(token->wallets);
  }
  if (token->wallets.empty()) return std::nullopt;
  bool rotated = token->key_id != keys->active().id;
  return Opened{std::move(*token), dropped > 0 || rotated};
}

std::string IdentityService::Seal(TokenKind kind, IdentityToken& token, int64_t now) const {
  std::shared_ptr<const KeyRing> keys = keys_.Current();
  token.sealed_at = now;
  token.key_id = keys->active().id;
  return SealToken(*keys, kind, token);
}

void IdentityService::ReplaceKeys(KeyRing keys) {
  keys_.Publish(std::make_shared<const KeyRing>(std::move(keys)));
}

Result<store::ErasureRecord> IdentityService::EraseWallet(const Address& wallet) {
  MutexLock lock(mu_);
  int64_t now = clock_.NowSeconds();
  std::shared_ptr<const ErasureList> current = erasures_.Current();
  uint64_t digest = current->Digest(wallet);
  store::ErasureRecord record{.digest = digest, .erased_at = now, .seq = current->last_seq()};
  if (store_ == nullptr) {
    std::unordered_map<uint64_t, int64_t> entries = current->entries();
    entries[digest] = now;
    PublishErasures(
        std::make_shared<const ErasureList>(current->key(), std::move(entries), record.seq));
    return record;
  }
  ADS_ASSIGN_OR_RETURN(record, store_->PutErasure(digest, now));
  ADS_RETURN_IF_ERROR(SyncLocked());  // publishes it (and any other process's) at once
  return record;
}

std::optional<int64_t> IdentityService::ErasedAt(const Address& wallet) const {
  return erasures_.Current()->ErasedAt(wallet);
}

size_t IdentityService::erasure_count() const { return erasures_.Current()->size(); }

}  // namespace adserver::identity
