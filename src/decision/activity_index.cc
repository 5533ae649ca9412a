#include "decision/activity_index.h"

#include <algorithm>

namespace adserver::decision {

void ActivityIndex::Add(const Address& wallet, const Interaction& interaction) {
  by_wallet_[wallet].push_back(interaction);
}

void ActivityIndex::Finalize() {
  for (auto& [wallet, interactions] : by_wallet_) {
    // Chain as a secondary key keeps the order independent of insertion order.
    std::sort(interactions.begin(), interactions.end(),
              [](const Interaction& a, const Interaction& b) {
                return a.project_id != b.project_id ? a.project_id < b.project_id
                                                    : a.chain_id < b.chain_id;
              });
    interactions.shrink_to_fit();
  }
}

std::span<const Interaction> ActivityIndex::Lookup(const Address& wallet) const {
  auto it = by_wallet_.find(wallet);
  if (it == by_wallet_.end()) return {};
  return it->second;
}

void ActivityIndex::LookupAll(std::span<const Address> wallets, const Sink& sink) const {
  for (const Address& wallet : wallets) sink(Lookup(wallet));
}

}  // namespace adserver::decision
