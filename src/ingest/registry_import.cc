#include "ingest/registry_import.h"

#include <simdjson.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "common/address.h"
#include "ingest/validation.h"

namespace adserver::ingest {
namespace {

using Contract = std::pair<int64_t, Address>;
constexpr size_t kMaxImportedNameChars = 200;
constexpr char kMetaMaskLogoBase[] =
    "https://raw.githubusercontent.com/MetaMask/contract-metadata/master/images/";

std::string_view Str(simdjson::dom::element el, const char* key) {
  std::string_view v;
  if (el.is_object() && el[key].get_string().get(v) == simdjson::SUCCESS) return v;
  return {};
}

std::optional<int64_t> ChainId(simdjson::dom::element el) {
  int64_t v = 0;
  if (el["chainId"].get_int64().get(v) == simdjson::SUCCESS && v > 0) return v;
  uint64_t u = 0;
  if (el["chainId"].get_uint64().get(u) == simdjson::SUCCESS && u > 0 && u < (1ull << 62)) {
    return static_cast<int64_t>(u);
  }
  return std::nullopt;
}

// Keeps printable text only (names come from third parties) and bounds the length.
std::string CleanName(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '<' || c == '>') continue;
    out.push_back(c);
  }
  if (out.size() > kMaxImportedNameChars) out.resize(kMaxImportedNameChars);
  while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
  return out;
}

// Collects candidates by slug, keeping the first name/logo/category seen.
class CandidateSet {
 public:
  explicit CandidateSet(RegistryImportSummary& summary) : summary_(summary) {}

  void Add(std::string_view slug_hint, std::string_view name, std::string_view logo,
           std::string_view category, std::optional<int64_t> chain_id, std::string_view address) {
    ++summary_.entries;
    if (!chain_id) return Skip("missing or invalid chainId");
    std::optional<Address> parsed = ParseAddress(address);
    if (!parsed) return Skip("not an EVM address (non-EVM chain or malformed)");
    std::string slug = SlugFromName(slug_hint.empty() ? name : slug_hint);
    if (slug.empty()) slug = "contract-" + FormatAddress(*parsed).substr(2, 8);
    auto [it, inserted] = by_slug_.try_emplace(slug);
    store::ProjectRecord& p = it->second.project;
    if (inserted) {
      p.slug = slug;
      p.name = CleanName(name.empty() ? slug : name);
      p.logo_url = std::string(logo);
      p.category = std::string(category);
    }
    if (!seen_.insert({*chain_id, *parsed}).second) return Skip("duplicate entry in the list");
    p.contracts.push_back({.chain_id = *chain_id, .address = *parsed});
  }

  std::vector<ProjectCandidate> Take() {
    std::vector<ProjectCandidate> out;
    out.reserve(by_slug_.size());
    for (auto& [slug, c] : by_slug_) {
      if (!c.project.contracts.empty()) out.push_back(std::move(c));
    }
    return out;
  }

 private:
  void Skip(const std::string& reason) { ++summary_.skipped[reason]; }
  RegistryImportSummary& summary_;
  std::map<std::string, ProjectCandidate> by_slug_;
  std::set<Contract> seen_;
};

void ParseTokenList(simdjson::dom::array tokens, CandidateSet& set) {
  for (simdjson::dom::element t : tokens) {
    set.Add({}, Str(t, "name"), Str(t, "logoURI"), "token", ChainId(t), Str(t, "address"));
  }
}

void ParseContractMap(simdjson::dom::object map, CandidateSet& set) {
  for (auto [address, meta] : map) {
    std::string_view logo = Str(meta, "logo");
    std::string logo_url = logo.empty() ? "" : kMetaMaskLogoBase + std::string(logo);
    bool nft = false;
    if (meta["erc721"].get_bool().get(nft) != simdjson::SUCCESS) nft = false;
    set.Add({}, Str(meta, "name"), logo_url, nft ? "nft" : "token", 1, address);
  }
}

void ParseAddressBook(simdjson::dom::array projects, CandidateSet& set) {
  for (simdjson::dom::element p : projects) {
    simdjson::dom::array contracts;
    if (p["contracts"].get_array().get(contracts) != simdjson::SUCCESS) continue;
    for (simdjson::dom::element c : contracts) {
      set.Add(Str(p, "slug"), Str(p, "name"), Str(p, "logoURI"), Str(p, "category"), ChainId(c),
              Str(c, "address"));
    }
  }
}

// The registry as loaded from the store, updated as candidates merge into it.
struct Registry {
  std::vector<store::ProjectRecord> projects;
  std::map<std::string, size_t> by_slug;
  std::map<Contract, size_t> by_contract;

  void Index(size_t i) {
    by_slug[projects[i].slug] = i;
    for (const store::ContractRef& c : projects[i].contracts)
      by_contract[{c.chain_id, c.address}] = i;
  }
};

// The project a candidate joins: the owner of one of its contracts, else the one with its slug.
std::optional<size_t> Target(const Registry& reg, const store::ProjectRecord& cand) {
  for (const store::ContractRef& c : cand.contracts) {
    auto it = reg.by_contract.find({c.chain_id, c.address});
    if (it != reg.by_contract.end()) return it->second;
  }
  auto it = reg.by_slug.find(cand.slug);
  if (it != reg.by_slug.end()) return it->second;
  return std::nullopt;
}

// Validates `p`, dropping an unacceptable logo rather than the project.
Status Sanitize(store::ProjectRecord& p) {
  if (ValidateProject(p).ok()) return OkStatus();
  p.logo_url.clear();
  return ValidateProject(p);
}

Status MergeCandidate(store::InventoryStore& store, int64_t now, Registry& reg,
                      ProjectCandidate cand, RegistryImportSummary& summary) {
  std::optional<size_t> target = Target(reg, cand.project);
  store::ProjectRecord updated = target ? reg.projects[*target] : cand.project;
  updated.contracts.clear();  // the new contracts first; a target's own are added back below
  size_t added = 0;
  for (const store::ContractRef& c : cand.project.contracts) {
    auto owner = reg.by_contract.find({c.chain_id, c.address});
    if (owner == reg.by_contract.end()) {
      updated.contracts.push_back(c);
      ++added;
    } else if (!target || owner->second != *target) {
      ++summary.skipped["contract owned by another project"];
    } else {
      ++summary.skipped["already in the registry"];
    }
  }
  if (added == 0) {
    ++summary.unchanged;
    return OkStatus();
  }
  if (target) {
    std::vector<store::ContractRef> all = reg.projects[*target].contracts;
    all.insert(all.end(), updated.contracts.begin(), updated.contracts.end());
    updated.contracts = std::move(all);
    if (updated.logo_url.empty()) updated.logo_url = cand.project.logo_url;
  }
  if (Status st = Sanitize(updated); !st.ok()) {
    summary.skipped["invalid project"] += added;
    return OkStatus();
  }
  Result<store::ProjectRecord> written =
      target ? store.UpdateProject(updated, now) : store.CreateProject(updated, now);
  if (!written.ok()) {
    if (written.status().code() != Code::kConflict) return written.status();
    summary.skipped["store conflict"] += added;
    return OkStatus();
  }
  size_t index = target ? *target : reg.projects.size();
  if (target) {
    reg.projects[index] = std::move(*written);
    ++summary.merged;
  } else {
    reg.projects.push_back(std::move(*written));
    ++summary.added;
  }
  reg.Index(index);
  summary.contracts_added += added;
  return OkStatus();
}

}  // namespace

std::string_view ProjectListFormatName(ProjectListFormat format) {
  switch (format) {
    case ProjectListFormat::kTokenList:
      return "tokenlist";
    case ProjectListFormat::kContractMap:
      return "contract-map";
    case ProjectListFormat::kAddressBook:
      return "address-book";
  }
  return "unknown";
}

std::string SlugFromName(std::string_view name) {
  std::string slug;
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (keep) {
      slug.push_back(c);
    } else if (!slug.empty() && slug.back() != '-') {
      slug.push_back('-');
    }
  }
  if (slug.size() > 64) slug.resize(64);
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug;
}

Result<std::vector<ProjectCandidate>> ParseProjectList(std::string_view json,
                                                       RegistryImportSummary& summary) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS || !doc.is_object()) {
    return InvalidArgumentError("project list is not a JSON object");
  }
  CandidateSet set(summary);
  simdjson::dom::array arr;
  if (doc["tokens"].get_array().get(arr) == simdjson::SUCCESS) {
    summary.format = ProjectListFormat::kTokenList;
    ParseTokenList(arr, set);
  } else if (doc["projects"].get_array().get(arr) == simdjson::SUCCESS) {
    summary.format = ProjectListFormat::kAddressBook;
    ParseAddressBook(arr, set);
  } else {
    simdjson::dom::object obj;
    if (doc.get_object().get(obj) != simdjson::SUCCESS) {
      return InvalidArgumentError("project list is not a JSON object");
    }
    for (auto [key, value] : obj) {
      if (!ParseAddress(key) || !value.is_object()) {
        return InvalidArgumentError(
            "unknown project list format (expected a token list, a contract map or an address "
            "book)");
      }
    }
    summary.format = ProjectListFormat::kContractMap;
    ParseContractMap(obj, set);
  }
  return set.Take();
}

Result<RegistryImportSummary> ImportProjectList(std::string_view json, store::InventoryStore& store,
                                                int64_t now) {
  RegistryImportSummary summary;
  ADS_ASSIGN_OR_RETURN(std::vector<ProjectCandidate> candidates, ParseProjectList(json, summary));
  Registry reg;
  ADS_ASSIGN_OR_RETURN(reg.projects, store.ListProjects());
  for (size_t i = 0; i < reg.projects.size(); ++i) reg.Index(i);
  for (ProjectCandidate& cand : candidates) {
    ADS_RETURN_IF_ERROR(MergeCandidate(store, now, reg, std::move(cand), summary));
  }
  return summary;
}

}  // namespace adserver::ingest
