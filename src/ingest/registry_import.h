#pragma once

// Imports real onchain project lists into the project registry.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/records.h"
#include "store/inventory_store.h"

namespace adserver::ingest {

// Which kind of document ParseProjectList recognised.
enum class ProjectListFormat {
  kTokenList,    // Uniswap token-list schema: {"name", "tokens": [{chainId, address, name, ...}]}
  kContractMap,  // MetaMask contract-map.json: {"0xaddr": {name, logo, erc20|erc721, symbol}}
  kAddressBook,  // adserver's shape: {"projects": [{slug, name, category?, logoURI?,
                 //   contracts: [{chainId, address}]}]} (tools/registry/export.js writes it)
};
std::string_view ProjectListFormatName(ProjectListFormat format);

// Result of importing one list. `skipped` counts entries (contracts) by reason.
struct RegistryImportSummary {
  ProjectListFormat format = ProjectListFormat::kTokenList;
  size_t entries = 0;                     // contract entries of the pass read from the document
  size_t added = 0;                       // projects created
  size_t merged = 0;                      // existing projects that gained contracts
  size_t unchanged = 0;                   // projects whose contracts were all known already
  size_t contracts_added = 0;             // (chain, address) pairs newly in the registry
  size_t sources_added = 0;               // projects that gained this list as a source only
  std::map<std::string, size_t> skipped;  // reason -> entries
};

// A project as read from a list, before merging.
struct ProjectCandidate {
  store::ProjectRecord project;  // id 0; slug derived from the name when the list has none
  bool derivative = false;       // a protocol's receipt, LP, vault or debt tokens
  bool unnamed = false;          // no human name in the list: joins its contract's owner only
  // Set for a chain or bridge variant ("USD Coin (PoS)" keyed "usd-coin"): the slug of the
  // list's own name, used when the project with the key has another ticker.
  std::string fallback_slug;
};

// Which entries of a document an import takes (issue 40). An entry without a human name joins
// only the project that owns its contract, so it depends on every list that names contracts:
// importing a set of lists named entries first (every list), then unnamed ones (every list)
// gives the same registry in any order, and importing the set again changes nothing.
enum class ImportEntries {
  kAll,      // both, in one pass over the document
  kNamed,    // every entry with a human name (and every non-token entry)
  kUnnamed,  // only token entries without a human name
};

// Parses a list document (format auto-detected). Entries that cannot be projects (non-EVM chain,
// malformed address) are counted in `skipped` by reason. Candidates with the same slug are
// merged, so a token listed on several chains is one project; token entries go through the
// rules of registry_rules.h first (one project per real project, issue 40). A document's
// "source" (a string or a list of "package@version", also per address-book project) is recorded
// on every project it names. InvalidArgument if the document is not JSON or not one of the
// formats.
Result<std::vector<ProjectCandidate>> ParseProjectList(std::string_view json,
                                                       RegistryImportSummary& summary,
                                                       ImportEntries entries = ImportEntries::kAll);

// Parses `json` and merges it into the store's registry. A candidate joins the existing project
// that already owns one of its contracts (by chain id and address), else the project with its
// slug (a chain variant only when the tickers agree), else becomes a new project; contracts
// owned by a different project are skipped, never moved. An entry without a human name joins
// only a project that owns its contract (it adds its list as a source), else is skipped. Logos that
// are not valid https URLs are dropped. Returns the store's error if a write fails (earlier
// projects stay written: the import is idempotent, so it can be re-run).
Result<RegistryImportSummary> ImportProjectList(std::string_view json, store::InventoryStore& store,
                                                int64_t now,
                                                ImportEntries entries = ImportEntries::kAll);

// "USD Coin (PoS)" -> "usd-coin-pos": [a-z0-9-], at most 64 characters; empty if nothing is left.
std::string SlugFromName(std::string_view name);

}  // namespace adserver::ingest
