#pragma once

#include <string_view>

namespace adserver::events::detail {

// The crawler user-agent patterns embedded at build time, one regular expression a line
// (third_party/crawler-user-agents/patterns.txt, from the npm package crawler-user-agents).
std::string_view BuiltinCrawlerPatterns();

}  // namespace adserver::events::detail
