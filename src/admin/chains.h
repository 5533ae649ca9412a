#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace adserver::admin {

// A chain the console names (issue 38 items 3 and 6): its name in pickers and tables, and the
// block explorer a transaction or an address links to (https://host[/path], without a trailing
// slash; empty = none).
struct ChainInfo {
  int64_t id = 0;
  std::string name;
  std::string explorer;
};

// The chains named out of the box: the EVM networks web3 publishers' visitors use most, and
// Sepolia. `[[network.chains]]` in the configuration renames one, changes or removes
// (explorer = "") its explorer, or adds one (config::LoadConfig merges by id).
std::vector<ChainInfo> DefaultChains();

// `chains` with `changes` applied by id (a known id replaced in place, a new one appended).
std::vector<ChainInfo> MergeChains(std::vector<ChainInfo> chains, const std::vector<ChainInfo>& changes);

}  // namespace adserver::admin
