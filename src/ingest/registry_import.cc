#include "ingest/registry_import.h"

#include <simdjson.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "common/address.h"
#include "ingest/registry_rules.h"
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

// At most `max` bytes, cut at a UTF-8 character boundary.
std::string Truncated(std::string s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
  return s;
}

// Keeps printable text only (names come from third parties) and bounds the length.
std::string CleanName(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '<' || c == '>') continue;
    out.push_back(c);
  }
  return Truncated(std::move(out), kMaxImportedNameChars);
}

// One contract entry of a list, before the rules.
struct Entry {
  std::string_view slug_hint;  // an address book's slug; token lists have none
  std::string_view name;
  std::string_view symbol;
  std::string_view logo;
  std::string_view category;
  std::optional<int64_t> chain_id;
  std::string_view address;
  const std::vector<std::string>* sources = nullptr;
};

void AddSources(std::vector<std::string>& to, const std::vector<std::string>& from) {
  for (const std::string& s : from) {
    if (std::find(to.begin(), to.end(), s) == to.end()) to.push_back(s);
  }
}

// Collects candidates by key (a slug), keeping the first name/logo/category seen. Token entries
// go through the rules of registry_rules.h: a receipt, LP, vault or debt token becomes a
// contract of its protocol, a chain or bridge variant joins its token (when the tickers agree),
// and an entry without a human name stays a candidate of its own contract only.
class CandidateSet {
 public:
  CandidateSet(RegistryImportSummary& summary, ImportEntries pass)
      : summary_(summary), pass_(pass) {}

  void Add(const Entry& e) {
    const bool token = e.slug_hint.empty() && (e.category.empty() || e.category == "token");
    const bool unnamed = token && !HasHumanName(e.name, e.symbol) &&
                         !DerivativeProtocol(e.name, e.symbol).has_value();
    if ((pass_ == ImportEntries::kNamed && unnamed) ||
        (pass_ == ImportEntries::kUnnamed && !unnamed)) {
      return;  // the other pass's entry
    }
    ++summary_.entries;
    if (!e.chain_id) return Skip("missing or invalid chainId");
    std::optional<Address> parsed = ParseAddress(e.address);
    if (!parsed) return Skip("not an EVM address (non-EVM chain or malformed)");
    if (!seen_.insert({*e.chain_id, *parsed}).second) return Skip("duplicate entry in the list");
    ProjectCandidate* cand = nullptr;
    if (!token) {
      std::string slug = SlugFromName(e.slug_hint.empty() ? e.name : e.slug_hint);
      if (slug.empty()) slug = "contract-" + FormatAddress(*parsed).substr(2, 8);
      cand = &Candidate(slug, e.name, e.symbol, e.logo, e.category);
    } else if (std::optional<ProtocolRef> protocol = DerivativeProtocol(e.name, e.symbol)) {
      cand = &Candidate(std::string(protocol->slug), protocol->name, {}, {}, protocol->category);
      cand->derivative = true;
    } else if (unnamed) {
      // Kept only where another list names the contract (MergeCandidate).
      cand = &Candidate("unnamed:" + std::to_string(*e.chain_id) + ":" + FormatAddress(*parsed),
                        e.name, e.symbol, e.logo, "token");
      cand->unnamed = true;
    } else {
      TokenIdentity id = CanonicalToken(e.name, e.symbol);
      std::string key = id.key.empty() ? "contract-" + FormatAddress(*parsed).substr(2, 8) : id.key;
      auto it = by_slug_.find(key);
      if (id.variant && it != by_slug_.end() &&
          !SymbolsAgree(it->second.project.symbol, id.symbol)) {
        // Same name once stripped, another ticker: not the same token.
        key = SlugFromName(e.name);
        id.name = std::string(e.name);
        id.variant = false;
      }
      cand = &Candidate(key, id.name, id.symbol, e.logo, "token");
      if (id.variant) cand->fallback_slug = SlugFromName(e.name);
    }
    if (e.sources != nullptr) AddSources(cand->project.sources, *e.sources);
    cand->project.contracts.push_back({.chain_id = *e.chain_id, .address = *parsed});
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
  ProjectCandidate& Candidate(const std::string& key, std::string_view name,
                              std::string_view symbol, std::string_view logo,
                              std::string_view category) {
    auto [it, inserted] = by_slug_.try_emplace(key);
    store::ProjectRecord& p = it->second.project;
    if (inserted) {
      p.slug = key.starts_with("unnamed:") ? SlugFromName(symbol) : key;
      p.name = CleanName(name.empty() ? std::string_view(p.slug) : name);
      p.symbol = Truncated(CleanName(symbol), kMaxSymbolChars);
      p.logo_url = std::string(logo);
      p.category = std::string(category);
    } else {
      if (p.symbol.empty()) p.symbol = Truncated(CleanName(symbol), kMaxSymbolChars);
      if (p.logo_url.empty()) p.logo_url = std::string(logo);
    }
    return it->second;
  }

  void Skip(const std::string& reason) { ++summary_.skipped[reason]; }
  RegistryImportSummary& summary_;
  const ImportEntries pass_;
  std::map<std::string, ProjectCandidate> by_slug_;
  std::set<Contract> seen_;
};

// The document's (or an address-book project's) "source": one "package@version" or a list.
std::vector<std::string> Sources(simdjson::dom::element el) {
  std::vector<std::string> out;
  std::string_view one;
  simdjson::dom::array many;
  if (!el.is_object()) return out;
  if (el["source"].get_string().get(one) == simdjson::SUCCESS) {
    if (!one.empty()) out.push_back(CleanName(one));
  } else if (el["source"].get_array().get(many) == simdjson::SUCCESS) {
    for (simdjson::dom::element s : many) {
      if (s.get_string().get(one) == simdjson::SUCCESS && !one.empty()) {
        out.push_back(CleanName(one));
      }
    }
  }
  return out;
}

void ParseTokenList(simdjson::dom::array tokens, const std::vector<std::string>& sources,
                    CandidateSet& set) {
  for (simdjson::dom::element t : tokens) {
    set.Add({.name = Str(t, "name"),
             .symbol = Str(t, "symbol"),
             .logo = Str(t, "logoURI"),
             .category = Str(t, "category"),
             .chain_id = ChainId(t),
             .address = Str(t, "address"),
             .sources = &sources});
  }
}

void ParseContractMap(simdjson::dom::object map, CandidateSet& set) {
  for (auto [address, meta] : map) {
    std::string_view logo = Str(meta, "logo");
    std::string logo_url = logo.empty() ? "" : kMetaMaskLogoBase + std::string(logo);
    bool nft = false;
    if (meta["erc721"].get_bool().get(nft) != simdjson::SUCCESS) nft = false;
    set.Add({.name = Str(meta, "name"),
             .symbol = Str(meta, "symbol"),
             .logo = logo_url,
             .category = nft ? "nft" : "token",
             .chain_id = 1,
             .address = address});
  }
}

void ParseAddressBook(simdjson::dom::array projects, const std::vector<std::string>& doc_sources,
                      CandidateSet& set) {
  for (simdjson::dom::element p : projects) {
    simdjson::dom::array contracts;
    if (p["contracts"].get_array().get(contracts) != simdjson::SUCCESS) continue;
    std::vector<std::string> sources = Sources(p);
    if (sources.empty()) sources = doc_sources;
    std::string_view slug = Str(p, "slug");
    std::string_view name = Str(p, "name");
    for (simdjson::dom::element c : contracts) {
      set.Add({.slug_hint = slug.empty() ? name : slug,
               .name = name,
               .symbol = Str(p, "symbol"),
               .logo = Str(p, "logoURI"),
               .category = Str(p, "category"),
               .chain_id = ChainId(c),
               .address = Str(c, "address"),
               .sources = &sources});
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

// The project a candidate joins: the owner of one of its contracts, else (a named candidate) the
// one with its slug, if a chain variant's ticker agrees with it, else the one with its fallback
// slug. Sets `cand.slug` to the slug a new project would take.
std::optional<size_t> Target(const Registry& reg, ProjectCandidate& cand) {
  for (const store::ContractRef& c : cand.project.contracts) {
    auto it = reg.by_contract.find({c.chain_id, c.address});
    if (it != reg.by_contract.end()) return it->second;
  }
  if (cand.unnamed) return std::nullopt;
  auto it = reg.by_slug.find(cand.project.slug);
  if (it != reg.by_slug.end()) {
    if (cand.fallback_slug.empty() ||
        SymbolsAgree(reg.projects[it->second].symbol, cand.project.symbol)) {
      return it->second;
    }
    cand.project.slug = cand.fallback_slug;
    it = reg.by_slug.find(cand.project.slug);
    if (it != reg.by_slug.end()) return it->second;
  }
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
  std::optional<size_t> target = Target(reg, cand);
  if (!target && cand.unnamed) {
    summary.skipped["no human name (no other list names the contract)"] +=
        cand.project.contracts.size();
    return OkStatus();
  }
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
  size_t new_sources = 0;
  if (target) {
    for (const std::string& src : cand.project.sources) {
      if (std::find(updated.sources.begin(), updated.sources.end(), src) == updated.sources.end()) {
        updated.sources.push_back(src);
        ++new_sources;
      }
    }
  }
  if (added == 0 && new_sources == 0) {
    ++summary.unchanged;
    return OkStatus();
  }
  if (target) {
    std::vector<store::ContractRef> all = reg.projects[*target].contracts;
    all.insert(all.end(), updated.contracts.begin(), updated.contracts.end());
    updated.contracts = std::move(all);
    if (updated.logo_url.empty()) updated.logo_url = cand.project.logo_url;
    // The ticker of a token that names the project itself ("Uniswap" UNI), not of one that
    // joined it by a contract the project owns.
    if (updated.symbol.empty() && !cand.derivative && cand.project.slug == updated.slug) {
      updated.symbol = cand.project.symbol;
    }
    // A protocol first seen as its governance token ("Curve" CRV) is the protocol.
    if (cand.derivative && (updated.category.empty() || updated.category == "token")) {
      updated.category = cand.project.category;
    }
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
    if (added > 0) {
      ++summary.merged;
    } else {
      ++summary.sources_added;
    }
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
                                                       RegistryImportSummary& summary,
                                                       ImportEntries entries) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS || !doc.is_object()) {
    return InvalidArgumentError("project list is not a JSON object");
  }
  CandidateSet set(summary, entries);
  simdjson::dom::array arr;
  if (doc["tokens"].get_array().get(arr) == simdjson::SUCCESS) {
    summary.format = ProjectListFormat::kTokenList;
    ParseTokenList(arr, Sources(doc), set);
  } else if (doc["projects"].get_array().get(arr) == simdjson::SUCCESS) {
    summary.format = ProjectListFormat::kAddressBook;
    ParseAddressBook(arr, Sources(doc), set);
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
                                                int64_t now, ImportEntries entries) {
  RegistryImportSummary summary;
  ADS_ASSIGN_OR_RETURN(std::vector<ProjectCandidate> candidates,
                       ParseProjectList(json, summary, entries));
  Registry reg;
  ADS_ASSIGN_OR_RETURN(reg.projects, store.ListProjects());
  for (size_t i = 0; i < reg.projects.size(); ++i) reg.Index(i);
  for (ProjectCandidate& cand : candidates) {
    ADS_RETURN_IF_ERROR(MergeCandidate(store, now, reg, std::move(cand), summary));
  }
  return summary;
}

}  // namespace adserver::ingest
