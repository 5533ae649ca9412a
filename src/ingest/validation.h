#pragma once

// Validation of inventory records before they reach a store. Each function returns OK or
// InvalidArgument with one FieldError per problem, using the admin API's JSON field names
// ("headline", "images.LANDSCAPE", "targeting.projects[2]", ...).

#include <string_view>

#include "common/status.h"
#include "store/records.h"

namespace adserver::ingest {

inline constexpr size_t kMaxHeadlineChars = 100;
inline constexpr size_t kMaxContentChars = 400;
inline constexpr size_t kMaxCtaLabelChars = 25;
inline constexpr size_t kMaxNameChars = 200;
inline constexpr size_t kMaxSymbolChars = 32;  // a project's ticker (issue 40)
inline constexpr size_t kMaxUrlBytes = 2048;
// Most items of a list in a campaign or publisher (issue 39): targeting.projects,
// targeting.excludeProjects, targeting.chains, conversion.projects, allowedPublishers,
// allowedOrigins, blockedCommunities. Far above what a campaign needs; keeps a body's
// validation small and its error list short.
inline constexpr size_t kMaxListItems = 1000;

// Number of Unicode code points, or nullopt-equivalent -1 when `s` is not valid UTF-8.
long Utf8Length(std::string_view s);

// Plain text: valid UTF-8, no control characters, and none of the markup characters of spec
// 2.5 used as markup (`**`, `__`, a leading "* ", a literal "\n" sequence) nor HTML tags.
Status ValidatePlainText(std::string_view field, std::string_view text, size_t max_chars);

// Content in the simplified markup of spec 2.5 and nothing else: **bold**, *italic*,
// __underline__ balanced and not crossing line breaks, bullet lines "* item", line breaks as
// the two characters "\n"; no HTML tags, no other markdown (links, headings, code, images),
// no raw control characters; at most kMaxContentChars code points.
Status ValidateContentMarkup(std::string_view field, std::string_view content);

// Absolute http(s) URL with a host, no whitespace or control characters, at most
// kMaxUrlBytes.
Status ValidateHttpUrl(std::string_view field, std::string_view url);

// A browser origin exactly as sent in the Origin header: lower-case "http(s)://host[:port]",
// no path, query or trailing slash.
Status ValidateOrigin(std::string_view field, std::string_view origin);

// [a-z0-9-]{1,64}.
bool IsValidProjectSlug(std::string_view slug);

Status ValidatePublisher(const store::PublisherRecord& p);
Status ValidateCommunity(const store::CommunityRecord& c);
Status ValidateProject(const store::ProjectRecord& p);
Status ValidateCampaign(const store::CampaignRecord& c);
Status ValidateAd(const store::AdRecord& a);

}  // namespace adserver::ingest
