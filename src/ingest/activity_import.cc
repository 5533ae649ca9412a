#include "ingest/activity_import.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "common/address.h"
#include "ingest/bulk_import.h"

namespace adserver::ingest {
namespace {

struct ContractRefHash {
  size_t operator()(const store::ContractRef& c) const noexcept {
    return AddressHash{}(c.address) ^ static_cast<size_t>(c.chain_id * 0x9E3779B97F4A7C15ULL);
  }
};

// Project lookups for one import, built from one ListProjects call.
struct ProjectIndex {
  std::unordered_map<std::string, store::Id> by_slug;
  std::unordered_map<store::ContractRef, store::Id, ContractRefHash> by_contract;
};

Result<ProjectIndex> LoadProjectIndex(store::InventoryStore& store) {
  ADS_ASSIGN_OR_RETURN(std::vector<store::ProjectRecord> projects, store.ListProjects());
  ProjectIndex index;
  for (const store::ProjectRecord& p : projects) {
    index.by_slug.emplace(p.slug, p.id);
    for (const store::ContractRef& c : p.contracts) index.by_contract.emplace(c, p.id);
  }
  return index;
}

// One accepted line.
struct Interaction {
  Address wallet;
  store::Id project_id = 0;
  int64_t chain_id = 0;
  int64_t timestamp = 0;
  // Optional "txHash", "logIndex", "blockNumber": the line can be an onchain conversion.
  std::optional<chain::Hash32> tx_hash;
  std::optional<uint64_t> log_index;
  uint64_t block_number = 0;
};

// Reads an optional non-negative integer field; false with `*error` set when mistyped.
bool OptionalUintField(simdjson::dom::object& obj, const char* name, std::optional<uint64_t>& out,
                       std::string* error) {
  simdjson::dom::element el;
  if (obj.at_key(name).get(el) != simdjson::SUCCESS) return true;
  uint64_t value = 0;
  if (el.get_uint64().get(value) != simdjson::SUCCESS) {
    *error = std::string("field \"") + name + "\" must be a non-negative integer";
    return false;
  }
  out = value;
  return true;
}

using RowKey = std::tuple<Address, store::Id, int64_t>;

// Reads a string field; nullopt with `*error` set when absent (if required) or mistyped.
std::optional<std::string_view> StringField(simdjson::dom::object& obj, const char* name,
                                            bool required, std::string* error) {
  simdjson::dom::element el;
  if (obj.at_key(name).get(el) != simdjson::SUCCESS) {
    if (required) *error = std::string("missing field \"") + name + "\"";
    return std::nullopt;
  }
  std::string_view value;
  if (el.get_string().get(value) != simdjson::SUCCESS) {
    *error = std::string("field \"") + name + "\" must be a string";
    return std::nullopt;
  }
  return value;
}

std::optional<int64_t> ChainIdField(simdjson::dom::object& obj, std::string* error) {
  simdjson::dom::element el;
  if (obj.at_key("chainId").get(el) != simdjson::SUCCESS) {
    *error = "missing field \"chainId\"";
    return std::nullopt;
  }
  int64_t chain_id = 0;
  if (el.get_int64().get(chain_id) != simdjson::SUCCESS || chain_id <= 0) {
    *error = "field \"chainId\" must be a positive integer";
    return std::nullopt;
  }
  return chain_id;
}

// Resolves "project" (slug) or "contract" (address on chainId), exactly one of them.
std::optional<store::Id> ResolveProject(simdjson::dom::object& obj, int64_t chain_id,
                                        const ProjectIndex& projects, std::string* error) {
  std::optional<std::string_view> slug = StringField(obj, "project", false, error);
  if (!error->empty()) return std::nullopt;
  std::optional<std::string_view> contract = StringField(obj, "contract", false, error);
  if (!error->empty()) return std::nullopt;
  if (slug.has_value() == contract.has_value()) {
    *error = "exactly one of \"project\" and \"contract\" is required";
    return std::nullopt;
  }
  if (slug) {
    auto it = projects.by_slug.find(std::string(*slug));
    if (it != projects.by_slug.end()) return it->second;
    *error = "unknown project \"" + std::string(slug->substr(0, 64)) + "\"";
    return std::nullopt;
  }
  std::optional<Address> address = ParseAddress(*contract);
  if (!address) {
    *error = "field \"contract\" must be 0x followed by 40 hex digits";
    return std::nullopt;
  }
  auto it = projects.by_contract.find(store::ContractRef{chain_id, *address});
  if (it != projects.by_contract.end()) return it->second;
  *error = "unknown contract " + FormatAddress(*address) + " on chain " + std::to_string(chain_id);
  return std::nullopt;
}

// Parses one non-blank line into an interaction, or sets `*error`.
std::optional<Interaction> ParseLine(simdjson::dom::parser& parser, std::string_view line,
                                     const ProjectIndex& projects, int64_t max_timestamp,
                                     std::string* error) {
  simdjson::dom::element doc;
  if (auto code = parser.parse(line.data(), line.size()).get(doc); code != simdjson::SUCCESS) {
    *error = std::string("invalid JSON: ") + simdjson::error_message(code);
    return std::nullopt;
  }
  simdjson::dom::object obj;
  if (doc.get_object().get(obj) != simdjson::SUCCESS) {
    *error = "line must be a JSON object";
    return std::nullopt;
  }
  Interaction out;
  std::optional<std::string_view> wallet = StringField(obj, "wallet", true, error);
  if (!wallet) return std::nullopt;
  std::optional<Address> address = ParseAddress(*wallet);
  if (!address) {
    *error = "field \"wallet\" must be 0x followed by 40 hex digits";
    return std::nullopt;
  }
  out.wallet = *address;
  std::optional<int64_t> chain_id = ChainIdField(obj, error);
  if (!chain_id) return std::nullopt;
  out.chain_id = *chain_id;
  std::optional<store::Id> project = ResolveProject(obj, out.chain_id, projects, error);
  if (!project) return std::nullopt;
  out.project_id = *project;
  std::optional<std::string_view> timestamp = StringField(obj, "timestamp", true, error);
  if (!timestamp) return std::nullopt;
  Result<int64_t> seconds = ParseRfc3339(*timestamp);
  if (!seconds.ok()) {
    *error = "field \"timestamp\": " + seconds.status().message();
    return std::nullopt;
  }
  if (*seconds > max_timestamp) {
    *error = "field \"timestamp\" is more than one day in the future";
    return std::nullopt;
  }
  out.timestamp = *seconds;
  std::optional<std::string_view> tx = StringField(obj, "txHash", false, error);
  if (!error->empty()) return std::nullopt;
  if (tx) {
    out.tx_hash = ParseTxHash(*tx);
    if (!out.tx_hash) {
      *error = "field \"txHash\" must be 0x followed by 64 hex digits";
      return std::nullopt;
    }
  }
  std::optional<uint64_t> block;
  if (!OptionalUintField(obj, "logIndex", out.log_index, error) ||
      !OptionalUintField(obj, "blockNumber", block, error)) {
    return std::nullopt;
  }
  out.block_number = block.value_or(0);
  return out;
}

std::string_view TrimLine(std::string_view line) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!line.empty() && is_space(line.front())) line.remove_prefix(1);
  while (!line.empty() && is_space(line.back())) line.remove_suffix(1);
  return line;
}

void AddInteraction(std::map<RowKey, store::ActivityRecord>& rows, const Interaction& in) {
  auto [it, inserted] = rows.try_emplace(RowKey{in.wallet, in.project_id, in.chain_id});
  store::ActivityRecord& row = it->second;
  if (inserted) {
    row.wallet = in.wallet;
    row.project_id = in.project_id;
    row.chain_id = in.chain_id;
    row.last_seen = in.timestamp;
  }
  row.last_seen = std::max(row.last_seen, in.timestamp);
  ++row.count;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

struct CivilDate {
  int64_t year;
  int month;
  int day;
};

CivilDate CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {yoe + era * 400 + (month <= 2), month, day};
}

int DaysInMonth(int64_t year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// Reads exactly `n` digits at `pos`; -1 if they are not all digits.
int Digits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return -1;
  int value = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    value = value * 10 + (s[i] - '0');
  }
  return value;
}

bool Expect(std::string_view s, size_t pos, char c) { return pos < s.size() && s[pos] == c; }

// Parses the zone after the seconds: "Z" or "+HH:MM"/"-HH:MM"; returns its offset in seconds.
std::optional<int64_t> ParseZone(std::string_view zone) {
  if (zone == "Z" || zone == "z") return 0;
  if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || zone[3] != ':') {
    return std::nullopt;
  }
  int hours = Digits(zone, 1, 2);
  int minutes = Digits(zone, 4, 2);
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return std::nullopt;
  int64_t offset = hours * 3600 + minutes * 60;
  return zone[0] == '-' ? -offset : offset;
}

}  // namespace

Result<int64_t> ParseRfc3339(std::string_view text) {
  auto bad = [&] {
    return InvalidArgumentError("not an RFC 3339 timestamp (e.g. 2026-11-01T12:00:00Z)");
  };
  // YYYY-MM-DDTHH:MM:SS, then optional fraction, then zone.
  if (text.size() < 20 || !Expect(text, 4, '-') || !Expect(text, 7, '-') ||
      !Expect(text, 13, ':') || !Expect(text, 16, ':')) {
    return bad();
  }
  char t = text[10];
  if (t != 'T' && t != 't' && t != ' ') return bad();
  int year = Digits(text, 0, 4), month = Digits(text, 5, 2), day = Digits(text, 8, 2);
  int hour = Digits(text, 11, 2), minute = Digits(text, 14, 2), second = Digits(text, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60) {
    return bad();
  }
  if (day > DaysInMonth(year, month)) return bad();
  size_t pos = 19;
  if (Expect(text, pos, '.')) {
    size_t start = ++pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (pos == start) return bad();  // fraction truncated: times are whole seconds
  }
  std::optional<int64_t> offset = ParseZone(text.substr(pos));
  if (!offset) return bad();
  // A leap second (:60) lands on the first second of the next minute.
  int64_t local = DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  return local - *offset;
}

std::string FormatRfc3339(int64_t unix_seconds) {
  int64_t days = DayOf(unix_seconds);
  int64_t secs = unix_seconds - days * 86400;
  CivilDate date = CivilFromDays(days);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02d-%02dT%02d:%02d:%02dZ",
                static_cast<long long>(date.year), date.month, date.day,
                static_cast<int>(secs / 3600), static_cast<int>(secs % 3600 / 60),
                static_cast<int>(secs % 60));
  return buf;
}

Result<ImportSummary> ImportActivityNdjson(std::string_view ndjson, store::InventoryStore& store,
                                           store::ActivityStore& activity, const Clock& clock,
                                           TransactionSink* transactions) {
  size_t start = 0;
  return ImportActivityNdjsonLines(
      [&](std::string_view& line) -> Result<bool> {
        if (start >= ndjson.size()) return false;
        size_t end = std::min(ndjson.find('\n', start), ndjson.size());
        line = ndjson.substr(start, end - start);
        start = end + 1;
        return true;
      },
      store, activity, clock, transactions);
}

Result<ImportSummary> ImportActivityNdjsonLines(const LineSource& next,
                                                store::InventoryStore& store,
                                                store::ActivityStore& activity, const Clock& clock,
                                                TransactionSink* transactions) {
  ADS_ASSIGN_OR_RETURN(ProjectIndex projects, LoadProjectIndex(store));
  const int64_t max_timestamp = clock.NowSeconds() + kMaxFutureSkewSeconds;
  simdjson::dom::parser parser;
  std::map<RowKey, store::ActivityRecord> rows;
  ImportSummary summary;
  std::vector<chain::ChainInteraction> collected;
  size_t line_number = 0;
  for (;;) {
    std::string_view raw;
    ADS_ASSIGN_OR_RETURN(bool more, next(raw));
    if (!more) break;
    std::string_view line = TrimLine(raw);
    ++line_number;
    if (line.empty()) continue;
    std::string error;
    std::optional<Interaction> interaction =
        ParseLine(parser, line, projects, max_timestamp, &error);
    if (!interaction) {
      ++summary.rejected;
      if (summary.errors.size() < kMaxReportedErrors) {
        summary.errors.push_back({line_number, std::move(error)});
      }
      continue;
    }
    AddInteraction(rows, *interaction);
    ++summary.imported;
    if (transactions != nullptr && interaction->tx_hash &&
        transactions->Wants(interaction->project_id, interaction->timestamp)) {
      if (collected.size() < kMaxImportTransactions) {
        collected.push_back({.wallet = interaction->wallet,
                             .project_id = interaction->project_id,
                             .chain_id = interaction->chain_id,
                             .tx_hash = *interaction->tx_hash,
                             .log_index = interaction->log_index,
                             .block_number = interaction->block_number,
                             .block_time = interaction->timestamp});
      }
    }
  }
  if (rows.empty()) return summary;
  std::vector<store::ActivityRecord> batch;
  batch.reserve(rows.size());
  for (auto& [key, row] : rows) batch.push_back(row);
  // Conversions first (see TransactionSink): a failure leaves nothing written.
  if (!collected.empty()) ADS_RETURN_IF_ERROR(transactions->OnImported(collected));
  ADS_RETURN_IF_ERROR(activity.RecordActivity(batch));
  return summary;
}

Result<ImportSummary> ImportActivityNdjson(std::string_view ndjson, store::InventoryStore& store,
                                           store::ActivityStore& activity) {
  return ImportActivityNdjson(ndjson, store, activity, SystemClock::Get());
}

}  // namespace adserver::ingest
