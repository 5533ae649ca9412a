#include "events/crawler_matcher.h"

#include <re2/re2.h>

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

}  // namespace

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
  return RE2::PartialMatch(user_agent, *re_);
}

}  // namespace adserver::events
