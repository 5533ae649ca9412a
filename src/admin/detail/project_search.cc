#include "admin/detail/project_search.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <tuple>

#include "common/address.h"
#include "common/mutex.h"

namespace adserver::admin::detail {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// How well `p` matches `q` (lower case): 0 best, 4 none.
int Rank(const store::ProjectRecord& p, const std::string& name, const std::string& q) {
  if (q.empty()) return 3;
  const std::string symbol = Lower(p.symbol);
  if (p.slug == q || name == q || symbol == q) return 0;
  if (p.slug.starts_with(q) || name.starts_with(q) || (!symbol.empty() && symbol.starts_with(q))) {
    return 1;
  }
  if (p.slug.find(q) != std::string::npos || name.find(q) != std::string::npos) return 2;
  const std::string_view hex = std::string_view(q).substr(q.starts_with("0x") ? 2 : 0);
  if (hex.size() >= 4) {
    for (const store::ContractRef& c : p.contracts) {
      if (HexEncode(c.address.bytes.data(), c.address.bytes.size()).find(hex) !=
          std::string::npos) {
        return 3;
      }
    }
  }
  return 4;
}

// `source` is "package@version" or a package name (itself possibly "@scope/name").
bool FromSource(const store::ProjectRecord& p, std::string_view source) {
  return std::any_of(p.sources.begin(), p.sources.end(), [&](const std::string& s) {
    if (s == source) return true;
    const size_t at = s.rfind('@');
    return at != std::string::npos && at > 0 && std::string_view(s).substr(0, at) == source;
  });
}

}  // namespace

ProjectPage SearchProjects(std::span<const store::ProjectRecord> projects,
                           const ProjectSearch& search) {
  const std::string q = Lower(search.text);
  const std::string category = Lower(search.category);
  struct Hit {
    int rank;
    int64_t fewer_contracts;  // minus the count: more contracts sort first
    std::string name;
    const store::ProjectRecord* project;
  };
  std::vector<Hit> hits;
  for (const store::ProjectRecord& p : projects) {
    if (search.owner && p.owner_community_id != search.owner) continue;
    if (search.chain_id &&
        std::none_of(p.contracts.begin(), p.contracts.end(),
                     [&](const store::ContractRef& c) { return c.chain_id == *search.chain_id; })) {
      continue;
    }
    if (!category.empty() && Lower(p.category) != category) continue;
    if (!search.source.empty() && !FromSource(p, search.source)) continue;
    std::string name = Lower(p.name);
    const int rank = Rank(p, name, q);
    if (rank < 4) {
      hits.push_back({rank, -static_cast<int64_t>(p.contracts.size()), std::move(name), &p});
    }
  }
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
    return std::tie(a.rank, a.fewer_contracts, a.name, a.project->id) <
           std::tie(b.rank, b.fewer_contracts, b.name, b.project->id);
  });
  ProjectPage page;
  page.total = static_cast<int64_t>(hits.size());
  const auto begin = static_cast<size_t>(std::min<int64_t>(search.offset, page.total));
  const auto end = static_cast<size_t>(std::min<int64_t>(search.offset + search.limit, page.total));
  for (size_t i = begin; i < end; ++i) page.items.push_back(hits[i].project);
  if (static_cast<int64_t>(end) < page.total) page.next_offset = static_cast<int64_t>(end);
  return page;
}

Result<RegistryCache::Projects> RegistryCache::Get(store::InventoryStore& store) {
  // The counter first: a write landing during the read makes the next call read again, never
  // leaves an older registry cached under a newer counter.
  ADS_ASSIGN_OR_RETURN(uint64_t counter, store.ChangeCounter());
  MutexLock lock(mu_);
  if (projects_ && counter_ == counter) return projects_;
  ADS_ASSIGN_OR_RETURN(std::vector<store::ProjectRecord> projects, store.ListProjects());
  projects_ = std::make_shared<const std::vector<store::ProjectRecord>>(std::move(projects));
  counter_ = counter;
  return projects_;
}

}  // namespace adserver::admin::detail
