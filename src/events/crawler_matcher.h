#pragma once

// Known-crawler user agents (issue 18): every pattern of a list compiled once into one RE2, so
// a user agent is matched in one linear-time pass however long the list. Immutable once built;
// thread-safe; cheap to copy (shares the compiled expression). Each thread remembers the
// verdicts of the last user agents it matched (a few browsers' user agents make most traffic),
// so a repeat skips the pass and RE2's shared automaton cache.

#include <cstdint>
#include <memory>
#include <string_view>

#include "common/status.h"

namespace re2 {
class RE2;
}

namespace adserver::events {

class CrawlerMatcher {
 public:
  // Compiles `patterns` (one RE2-compatible regular expression a line; empty lines skipped).
  // InvalidArgument naming the first pattern that does not compile.
  static Result<CrawlerMatcher> Compile(std::string_view patterns);
  // The list embedded at build time (third_party/crawler-user-agents, npm crawler-user-agents);
  // compiled on first use.
  static const CrawlerMatcher& Builtin();

  // True if any pattern matches anywhere in `user_agent` (case-sensitive, as the list is).
  bool Matches(std::string_view user_agent) const;
  // The same without the thread's memo (tests, benchmarks).
  bool MatchesUncached(std::string_view user_agent) const;
  size_t pattern_count() const { return pattern_count_; }

 private:
  CrawlerMatcher(std::shared_ptr<const re2::RE2> re, size_t pattern_count);
  std::shared_ptr<const re2::RE2> re_;
  size_t pattern_count_ = 0;
  uint64_t id_ = 0;  // this compiled list among all made in the process (the memo's key)
};

}  // namespace adserver::events
