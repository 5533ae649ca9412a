#include "identity/identity_graph.h"

#include <algorithm>
#include <utility>

namespace adserver::identity {

void MergeWallets(std::vector<store::IdentityWalletRecord>& wallets, std::span<const Address> seen,
                  int64_t now, size_t max_wallets) {
  std::vector<store::IdentityWalletRecord> merged;
  merged.reserve(std::min(max_wallets, wallets.size() + seen.size()));
  auto contains = [&](const Address& a) {
    return std::any_of(merged.begin(), merged.end(),
                       [&](const store::IdentityWalletRecord& w) { return w.wallet == a; });
  };
  for (const Address& a : seen) {
    if (merged.size() == max_wallets) break;
    if (!contains(a)) merged.push_back({a, now});
  }
  std::stable_sort(wallets.begin(), wallets.end(),
                   [](const store::IdentityWalletRecord& x, const store::IdentityWalletRecord& y) {
                     return x.last_seen > y.last_seen;
                   });
  for (const store::IdentityWalletRecord& w : wallets) {
    if (merged.size() == max_wallets) break;
    if (!contains(w.wallet)) merged.push_back(w);
  }
  wallets = std::move(merged);
}

IdentityGraph::IdentityGraph(int64_t retention_seconds, size_t max_wallets)
    : retention_seconds_(retention_seconds), max_wallets_(max_wallets) {}

void IdentityGraph::MarkDirty(Shard& shard, Entry& entry) {
  if (entry.dirty) return;
  entry.dirty = true;
  shard.dirty.push_back(entry.record.key);
}

std::optional<std::vector<Address>> IdentityGraph::Wallets(store::IdentityKind kind,
                                                           const store::IdentityKey& key,
                                                           int64_t now) const {
  const int64_t cutoff = now - retention_seconds_;
  const Shard& shard = ShardOf(key);
  std::lock_guard<std::mutex> lock(shard.mu);
  auto it = shard.map.find(key);
  if (it == shard.map.end()) return std::nullopt;
  const store::IdentityRecord& r = it->second.record;
  if (r.kind != kind || r.last_seen < cutoff) return std::nullopt;
  std::vector<Address> out;
  out.reserve(r.wallets.size());
  for (const store::IdentityWalletRecord& w : r.wallets) {
    if (w.last_seen >= cutoff) out.push_back(w.wallet);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

void IdentityGraph::Link(store::IdentityKind kind, const store::IdentityKey& key,
                         std::span<const Address> wallets, int64_t now) {
  Shard& shard = ShardOf(key);
  std::lock_guard<std::mutex> lock(shard.mu);
  Entry& entry = shard.map[key];
  store::IdentityRecord& r = entry.record;
  if (r.kind != kind || r.last_seen < now - retention_seconds_) {
    r.wallets.clear();  // new, or an expired/other-kind identity under this key: start over
    r.kind = kind;
  }
  r.key = key;
  r.last_seen = std::max(r.last_seen, now);
  MergeWallets(r.wallets, wallets, now, max_wallets_);
  MarkDirty(shard, entry);
}

bool IdentityGraph::Touch(store::IdentityKind kind, const store::IdentityKey& key, int64_t now) {
  Shard& shard = ShardOf(key);
  std::lock_guard<std::mutex> lock(shard.mu);
  auto it = shard.map.find(key);
  if (it == shard.map.end()) return false;
  store::IdentityRecord& r = it->second.record;
  if (r.kind != kind || r.last_seen < now - retention_seconds_) return false;
  if (now > r.last_seen) {
    r.last_seen = now;
    MarkDirty(shard, it->second);
  }
  return true;
}

void IdentityGraph::Load(store::IdentityRecord&& record) {
  if (record.wallets.size() > max_wallets_) record.wallets.resize(max_wallets_);
  Shard& shard = ShardOf(record.key);
  std::lock_guard<std::mutex> lock(shard.mu);
  store::IdentityKey key = record.key;
  shard.map[key] = Entry{std::move(record), false};
}

std::vector<store::IdentityRecord> IdentityGraph::TakeDirty() {
  std::vector<store::IdentityRecord> out;
  for (Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    for (const store::IdentityKey& key : shard.dirty) {
      auto it = shard.map.find(key);
      if (it == shard.map.end() || !it->second.dirty) continue;  // erased or swept meanwhile
      it->second.dirty = false;
      out.push_back(it->second.record);
    }
    shard.dirty.clear();
  }
  return out;
}

std::vector<store::IdentityRecord> IdentityGraph::ForWallet(const Address& wallet) const {
  std::vector<store::IdentityRecord> out;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    for (const auto& [key, entry] : shard.map) {
      for (const store::IdentityWalletRecord& w : entry.record.wallets) {
        if (w.wallet == wallet) {
          out.push_back(entry.record);
          break;
        }
      }
    }
  }
  return out;
}

size_t IdentityGraph::EraseWallet(const Address& wallet) {
  size_t removed = 0;
  for (Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    for (auto it = shard.map.begin(); it != shard.map.end();) {
      auto& wallets = it->second.record.wallets;
      size_t before = wallets.size();
      std::erase_if(wallets,
                    [&](const store::IdentityWalletRecord& w) { return w.wallet == wallet; });
      removed += before - wallets.size();
      if (before != wallets.size() && wallets.empty()) {
        it = shard.map.erase(it);
      } else {
        ++it;
      }
    }
  }
  return removed;
}

size_t IdentityGraph::Sweep(int64_t now) {
  const int64_t cutoff = now - retention_seconds_;
  size_t removed = 0;
  for (Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    for (auto it = shard.map.begin(); it != shard.map.end();) {
      store::IdentityRecord& r = it->second.record;
      std::erase_if(r.wallets,
                    [&](const store::IdentityWalletRecord& w) { return w.last_seen < cutoff; });
      if (r.last_seen < cutoff || r.wallets.empty()) {
        it = shard.map.erase(it);
        ++removed;
      } else {
        ++it;
      }
    }
  }
  return removed;
}

size_t IdentityGraph::size() const {
  size_t n = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    n += shard.map.size();
  }
  return n;
}

}  // namespace adserver::identity
