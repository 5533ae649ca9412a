#include "admin/chains.h"

#include <algorithm>

namespace adserver::admin {

std::vector<ChainInfo> DefaultChains() {
  return {
      {1, "Ethereum", "https://etherscan.io"},
      {10, "Optimism", "https://optimistic.etherscan.io"},
      {56, "BNB Chain", "https://bscscan.com"},
      {100, "Gnosis", "https://gnosisscan.io"},
      {137, "Polygon", "https://polygonscan.com"},
      {324, "zkSync", "https://explorer.zksync.io"},
      {8453, "Base", "https://basescan.org"},
      {42161, "Arbitrum One", "https://arbiscan.io"},
      {43114, "Avalanche", "https://snowtrace.io"},
      {59144, "Linea", "https://lineascan.build"},
      {534352, "Scroll", "https://scrollscan.com"},
      {11155111, "Sepolia", "https://sepolia.etherscan.io"},
  };
}

std::vector<ChainInfo> MergeChains(std::vector<ChainInfo> chains, const std::vector<ChainInfo>& changes) {
  for (const ChainInfo& change : changes) {
    auto known = std::find_if(chains.begin(), chains.end(),
                              [&](const ChainInfo& c) { return c.id == change.id; });
    if (known != chains.end()) {
      *known = change;
    } else {
      chains.push_back(change);
    }
  }
  return chains;
}

}  // namespace adserver::admin
