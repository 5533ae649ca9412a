#include "events/crawler_matcher.h"

#include <re2/re2.h>

#include <array>
#include <atomic>
#include <string>

#include "common/check.h"
#include "events/detail/crawler_patterns.h"

namespace adserver::events {
namespace {

// The union of ~1,500 patterns needs more than RE2's default 8 MiB for its automata.
constexpr int64_t kMaxMemoryBytes = int64_t{64} << 20;

RE2::Options MatcherOptions() {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kMaxMemoryBytes);
  // The list is written for JavaScript/Python regular expressions over UTF-8 text; Latin-1
  // keeps a byte a character, so a malformed UTF-8 user agent still matches byte-wise.
  options.set_encoding(RE2::Options::EncodingLatin1);
  return options;
}

// The per-thread memo of verdicts (Matches): direct-mapped by a hash of the user agent, each
// slot keeping the whole user agent it holds, so a hit is an exact match. Longer user agents
// are not remembered; 64 slots of at most 256 bytes keep it within ~20 KB a thread.
constexpr size_t kMemoSlots = 64;
constexpr size_t kMaxMemoBytes = 256;

struct MemoSlot {
  uint64_t matcher = 0;  // CrawlerMatcher::id_; 0 = empty
  uint64_t hash = 0;
  bool verdict = false;
  std::string user_agent;
};

uint64_t HashOf(std::string_view text) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

std::atomic<uint64_t> next_matcher_id{1};

}  // namespace

CrawlerMatcher::CrawlerMatcher(std::shared_ptr<const re2::RE2> re, size_t pattern_count)
    : re_(std::move(re)),
      pattern_count_(pattern_count),
      id_(next_matcher_id.fetch_add(1, std::memory_order_relaxed)) {}

Result<CrawlerMatcher> CrawlerMatcher::Compile(std::string_view patterns) {
  std::string alternation;
  size_t count = 0;
  while (!patterns.empty()) {
    size_t newline = patterns.find('\n');
    std::string_view line = patterns.substr(0, newline);
    patterns.remove_prefix(newline == std::string_view::npos ? patterns.size() : newline + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    RE2 one(line, MatcherOptions());
    if (!one.ok()) {
      return InvalidArgumentError("crawler pattern does not compile",
                                  {{std::string(line), one.error()}});
    }
    if (count++ > 0) alternation += '|';
    alternation += "(?:";
    alternation += line;
    alternation += ')';
  }
  if (count == 0) alternation = "[^\\x00-\\xff]";  // matches nothing
  auto re = std::make_shared<const RE2>(alternation, MatcherOptions());
  if (!re->ok()) return InvalidArgumentError("crawler list does not compile: " + re->error());
  return CrawlerMatcher(std::move(re), count);
}

const CrawlerMatcher& CrawlerMatcher::Builtin() {
  static const CrawlerMatcher builtin = [] {
    Result<CrawlerMatcher> compiled = Compile(detail::BuiltinCrawlerPatterns());
    ADS_CHECK(compiled.ok()) << "the embedded crawler list does not compile: "
                             << compiled.status().message();
    return std::move(*compiled);
  }();
  return builtin;
}

bool CrawlerMatcher::Matches(std::string_view user_agent) const {
  if (user_agent.size() > kMaxMemoBytes) return MatchesUncached(user_agent);
  thread_local std::array<MemoSlot, kMemoSlots> memo;
  const uint64_t hash = HashOf(user_agent);
  MemoSlot& slot = memo[(hash >> 32) % kMemoSlots];
  if (slot.matcher == id_ && slot.hash == hash && slot.user_agent == user_agent) {
    return slot.verdict;
  }
  const bool verdict = MatchesUncached(user_agent);
  slot.matcher = id_;
  slot.hash = hash;
  slot.verdict = verdict;
  slot.user_agent.assign(user_agent);
  return verdict;
}

bool CrawlerMatcher::MatchesUncached(std::string_view user_agent) const {
  return RE2::PartialMatch(user_agent, *re_);
}

}  // namespace adserver::events
