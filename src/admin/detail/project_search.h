#pragma once

// Server-side search of the project registry (issue 38 item 5): the console's project pickers
// ask for a page of matches instead of downloading the whole registry (3.2 MB for 4,764
// projects). Pure: the caller reads the registry and serializes the page.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "store/inventory_store.h"
#include "store/records.h"

namespace adserver::admin::detail {

struct ProjectSearch {
  std::string text;                      // matched case-insensitively; "" = every project
  std::optional<store::Id> owner;        // only projects verified as this community's own
  std::optional<int64_t> chain_id;       // only projects with a contract on this chain
  std::string category;                  // only this category (case-insensitive); "" = any
  // Only projects from this list: a source "package@version", or a package name that matches
  // any of its versions. "" = any (issue 40).
  std::string source;
  int64_t limit = 20;
  int64_t offset = 0;
};

struct ProjectPage {
  std::vector<const store::ProjectRecord*> items;  // into the searched span
  int64_t total = 0;                               // every match
  std::optional<int64_t> next_offset;              // of the next page; nullopt on the last
};

// Matches, best first: the slug, name or symbol equal to the text, then starting with it, then
// slug or name containing it, then a contract address containing it (a 0x text); ties by the
// number of contracts (more first: "USD Coin" on 30 chains before a one-chain "Bridged USDC"),
// then name, then id.
ProjectPage SearchProjects(std::span<const store::ProjectRecord> projects,
                           const ProjectSearch& search);

// The registry as last read from the store, read again only when the store's inventory change
// counter has moved (issue 40: 20,000 projects and 52,000 contracts take a few hundred ms to
// read, once per search keystroke before). Thread-safe; searches share one copy.
class RegistryCache {
 public:
  using Projects = std::shared_ptr<const std::vector<store::ProjectRecord>>;
  Result<Projects> Get(store::InventoryStore& store);

 private:
  Mutex mu_;
  std::optional<uint64_t> counter_ ADS_GUARDED_BY(mu_);  // of `projects_`
  Projects projects_ ADS_GUARDED_BY(mu_);
};

}  // namespace adserver::admin::detail
