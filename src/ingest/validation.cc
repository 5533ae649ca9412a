#include "ingest/validation.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace adserver::ingest {
namespace {

// Collects field errors and turns them into one InvalidArgument status.
class Problems {
 public:
  void Add(std::string field, std::string message) {
    details_.push_back({std::move(field), std::move(message)});
  }
  Status ToStatus(std::string_view what) && {
    if (details_.empty()) return OkStatus();
    std::string message = "invalid " + std::string(what) + ": " + details_.front().field + ": " +
                          details_.front().message;
    if (details_.size() > 1) message += " (and " + std::to_string(details_.size() - 1) + " more)";
    return InvalidArgumentError(std::move(message), std::move(details_));
  }

 private:
  std::vector<FieldError> details_;
};

std::string Indexed(std::string_view field, size_t i) {
  return std::string(field) + "[" + std::to_string(i) + "]";
}

// Decodes one code point starting at s[i]; returns its byte length, or 0 if invalid
// (overlong forms, surrogates and values above U+10FFFF are invalid).
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* cp) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  size_t len;
  uint32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, min = 0x80, *cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, min = 0x800, *cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, min = 0x10000, *cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    *cp = (*cp << 6) | (byte(i + k) & 0x3F);
  }
  if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) return 0;
  return len;
}

bool IsControl(uint32_t cp) { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F); }

// Common text checks: valid UTF-8, no control characters, non-empty, at most `max_chars`.
// Returns an error message, or nullopt when the text passes.
std::optional<std::string> TextProblem(std::string_view text, size_t max_chars) {
  if (text.empty()) return "must not be empty";
  size_t chars = 0;
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    size_t len = DecodeUtf8(text, i, &cp);
    if (len == 0) return "must be valid UTF-8";
    if (cp == '\n' || cp == '\r') {
      return "must not contain raw line breaks (use the two characters \\n in content)";
    }
    if (IsControl(cp)) return "must not contain control characters";
    i += len;
    ++chars;
  }
  if (chars > max_chars) {
    return "must be at most " + std::to_string(max_chars) + " characters (has " +
           std::to_string(chars) + ")";
  }
  return std::nullopt;
}

bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// "<b>", "</p>", "<!-- -->", "<?x", "<https://..>" (autolinks) all start like a tag.
bool ContainsHtmlTag(std::string_view s) {
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] != '<') continue;
    char next = s[i + 1];
    if (IsAsciiAlpha(next) || next == '/' || next == '!' || next == '?') return true;
  }
  return false;
}

// "[text](url)" and "![alt](url)".
bool ContainsLink(std::string_view s) {
  size_t open = s.find('[');
  while (open != std::string_view::npos) {
    size_t close = s.find("](", open + 1);
    if (close != std::string_view::npos) return true;
    open = s.find('[', open + 1);
  }
  return false;
}

// Markdown ATX heading: 1-6 '#' then a space or end of line, after up to 3 spaces.
bool IsHeadingLine(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  size_t hashes = 0;
  while (i < line.size() && line[i] == '#') ++i, ++hashes;
  return hashes >= 1 && hashes <= 6 && (i == line.size() || line[i] == ' ');
}

// Splits on the two-character line break "\n" of spec 2.5.
std::vector<std::string_view> SplitMarkupLines(std::string_view content) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (size_t pos = content.find("\\n"); pos != std::string_view::npos;
       pos = content.find("\\n", start)) {
    lines.push_back(content.substr(start, pos - start));
    start = pos + 2;
  }
  lines.push_back(content.substr(start));
  return lines;
}

enum class Marker : char { kBold = 'B', kItalic = 'I', kUnderline = 'U' };

std::string_view MarkerText(Marker m) {
  switch (m) {
    case Marker::kBold: return "**";
    case Marker::kItalic: return "*";
    case Marker::kUnderline: return "__";
  }
  return "";
}

// Tracks open emphasis markers within one line; markers must nest properly.
class EmphasisStack {
 public:
  // Opens `m`, or closes it when it is the innermost open marker. Returns an error message
  // when `m` is open but not innermost (markers crossing, e.g. "**a *b** c*").
  std::optional<std::string> Toggle(Marker m) {
    if (!open_.empty() && open_.back() == m) {
      open_.pop_back();
      return std::nullopt;
    }
    if (std::find(open_.begin(), open_.end(), m) != open_.end()) {
      return "markers " + std::string(MarkerText(m)) + " and " +
             std::string(MarkerText(open_.back())) + " overlap instead of nesting";
    }
    open_.push_back(m);
    return std::nullopt;
  }
  bool IsInnermost(Marker m) const { return !open_.empty() && open_.back() == m; }
  std::optional<Marker> Unclosed() const {
    if (open_.empty()) return std::nullopt;
    return open_.back();
  }

 private:
  std::vector<Marker> open_;
};

// A run of three asterisks is bold plus italic. Whichever is innermost closes first, so
// "***a***", "**a *b***" and "*a **b***" all balance.
std::optional<std::string> ToggleTripleAsterisk(EmphasisStack& stack) {
  Marker first = stack.IsInnermost(Marker::kItalic) ? Marker::kItalic : Marker::kBold;
  Marker second = first == Marker::kItalic ? Marker::kBold : Marker::kItalic;
  if (auto err = stack.Toggle(first)) return err;
  return stack.Toggle(second);
}

// Checks the emphasis markers of one line (bullet prefix already removed).
std::optional<std::string> CheckEmphasis(std::string_view line) {
  EmphasisStack stack;
  for (size_t i = 0; i < line.size();) {
    char c = line[i];
    if (c != '*' && c != '_') {
      ++i;
      continue;
    }
    size_t run = 1;
    while (i + run < line.size() && line[i + run] == c) ++run;
    i += run;
    std::optional<std::string> err;
    if (c == '_') {
      // A single underscore is ordinary text (snake_case); "__" is underline.
      if (run == 1) continue;
      if (run > 2) return "a run of " + std::to_string(run) + " underscores is ambiguous";
      err = stack.Toggle(Marker::kUnderline);
    } else if (run == 1) {
      err = stack.Toggle(Marker::kItalic);
    } else if (run == 2) {
      err = stack.Toggle(Marker::kBold);
    } else if (run == 3) {
      err = ToggleTripleAsterisk(stack);
    } else {
      return "a run of " + std::to_string(run) + " asterisks is not valid markup";
    }
    if (err) return err;
  }
  if (auto open = stack.Unclosed()) {
    return "unbalanced " + std::string(MarkerText(*open)) +
           " (markers must be closed on the same line)";
  }
  return std::nullopt;
}

std::optional<std::string> MarkupLineProblem(std::string_view line) {
  if (IsHeadingLine(line)) return "headings are not allowed";
  // "* item" is a bullet; the rest of the line is checked like any other text.
  if (line.starts_with("* ")) line.remove_prefix(2);
  return CheckEmphasis(line);
}

std::optional<std::string> MarkupProblem(std::string_view content) {
  if (auto p = TextProblem(content, kMaxContentChars)) return p;
  if (ContainsHtmlTag(content)) return "HTML tags are not allowed";
  if (content.find('`') != std::string_view::npos) return "code (backticks) is not allowed";
  if (content.find("![") != std::string_view::npos && ContainsLink(content)) {
    return "images are not allowed";
  }
  if (ContainsLink(content)) return "links are not allowed";
  std::vector<std::string_view> lines = SplitMarkupLines(content);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (auto p = MarkupLineProblem(lines[i])) {
      if (lines.size() == 1) return p;
      return "line " + std::to_string(i + 1) + ": " + *p;
    }
  }
  return std::nullopt;
}

std::optional<std::string> PlainTextProblem(std::string_view text, size_t max_chars) {
  if (auto p = TextProblem(text, max_chars)) return p;
  if (ContainsHtmlTag(text)) return "must be plain text (HTML tags are not allowed)";
  if (text.find("\\n") != std::string_view::npos) {
    return "must be plain text (line breaks \\n are not allowed)";
  }
  if (text.find("**") != std::string_view::npos || text.find("__") != std::string_view::npos ||
      text.starts_with("* ")) {
    return "must be plain text (markup is not allowed)";
  }
  return std::nullopt;
}

bool IsHostChar(char c) {
  return IsAsciiAlpha(c) || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

bool IsValidPort(std::string_view port) {
  if (port.empty() || port.size() > 5) return false;
  int value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return value >= 1 && value <= 65535;
}

// Checks "host[:port]" (host a DNS name, IPv4 or bracketed IPv6 literal).
std::optional<std::string> AuthorityProblem(std::string_view authority) {
  if (authority.find('@') != std::string_view::npos) return "must not contain user info (@)";
  std::string_view host = authority;
  std::string_view port;
  if (host.starts_with('[')) {
    size_t close = host.find(']');
    if (close == std::string_view::npos || close == 1) return "has an invalid IPv6 host";
    for (char c : host.substr(1, close - 1)) {
      if (!(IsHostChar(c) || c == ':')) return "has an invalid IPv6 host";
    }
    std::string_view rest = host.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') return "has an invalid host";
    if (!rest.empty()) port = rest.substr(1);
    if (!rest.empty() && !IsValidPort(port)) return "has an invalid port";
    return std::nullopt;
  }
  size_t colon = host.find(':');
  if (colon != std::string_view::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
    if (!IsValidPort(port)) return "has an invalid port";
  }
  if (host.empty()) return "must have a host";
  if (!std::all_of(host.begin(), host.end(), IsHostChar)) return "has an invalid host";
  if (host.front() == '.' || host.back() == '.' || host.find("..") != std::string_view::npos) {
    return "has an invalid host";
  }
  return std::nullopt;
}

// Splits "scheme://rest"; accepts only http and https (lower-case or not).
std::optional<std::string_view> StripHttpScheme(std::string_view url) {
  auto lower_prefix = [&](std::string_view prefix) {
    if (url.size() < prefix.size()) return false;
    for (size_t i = 0; i < prefix.size(); ++i) {
      char c = url[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != prefix[i]) return false;
    }
    return true;
  };
  if (lower_prefix("https://")) return url.substr(8);
  if (lower_prefix("http://")) return url.substr(7);
  return std::nullopt;
}

std::optional<std::string> UrlProblem(std::string_view url) {
  if (url.empty()) return "must not be empty";
  if (url.size() > kMaxUrlBytes) {
    return "must be at most " + std::to_string(kMaxUrlBytes) + " bytes";
  }
  for (size_t i = 0; i < url.size(); ++i) {
    auto u = static_cast<unsigned char>(url[i]);
    if (u <= 0x20 || u >= 0x7F) {
      return "must not contain spaces, control or non-ASCII characters (percent-encode them)";
    }
    // RFC 3986 (issue 39): none of the characters a URI never holds, nor a quote (RFC 3986
    // allows ' as a sub-delimiter; refused here with " so that no URL can end an HTML
    // attribute); '%' only as a percent-encoding.
    if (std::string_view("\"'<>\\^`{|}").find(url[i]) != std::string_view::npos) {
      return std::string("must not contain ") + url[i] + " (percent-encode it)";
    }
    if (url[i] == '%' &&
        (i + 2 >= url.size() || !std::isxdigit(static_cast<unsigned char>(url[i + 1])) ||
         !std::isxdigit(static_cast<unsigned char>(url[i + 2])))) {
      return "must use % only in a percent-encoding (%XX)";
    }
  }
  std::optional<std::string_view> rest = StripHttpScheme(url);
  if (!rest) return "must be an absolute http:// or https:// URL";
  std::string_view authority = rest->substr(0, rest->find_first_of("/?#"));
  if (auto p = AuthorityProblem(authority)) return "URL " + *p;
  return std::nullopt;
}

// "scheme://host[:port]" exactly as a browser sends it in the Origin header.
std::optional<std::string> OriginProblem(std::string_view origin) {
  if (auto p = UrlProblem(origin)) return p;
  std::string_view authority = *StripHttpScheme(origin);
  if (authority.find_first_of("/?#") != std::string_view::npos) {
    return "must be an origin (scheme://host[:port]) without path, query or trailing slash";
  }
  if (std::any_of(origin.begin(), origin.end(), [](char c) { return c >= 'A' && c <= 'Z'; })) {
    return "must be lower-case";
  }
  return std::nullopt;
}

void CheckPlain(Problems& out, std::string_view field, std::string_view text, size_t max) {
  if (auto p = PlainTextProblem(text, max)) out.Add(std::string(field), *p);
}

void CheckUrl(Problems& out, std::string_view field, std::string_view url) {
  if (auto p = UrlProblem(url)) out.Add(std::string(field), *p);
}

void CheckPositiveIds(Problems& out, std::string_view field, const std::vector<int64_t>& ids) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] <= 0) out.Add(Indexed(field, i), "must be a positive id");
  }
}

bool IsValidSlug(std::string_view slug) {
  if (slug.empty() || slug.size() > 64) return false;
  return std::all_of(slug.begin(), slug.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

void CheckListSize(Problems& out, std::string_view field, size_t size) {
  if (size > kMaxListItems) {
    out.Add(std::string(field), "must list at most " + std::to_string(kMaxListItems) + " items");
  }
}

void CheckContracts(Problems& out, const std::vector<store::ContractRef>& contracts) {
  std::set<std::pair<int64_t, Address>> seen;
  for (size_t i = 0; i < contracts.size(); ++i) {
    const store::ContractRef& c = contracts[i];
    if (c.chain_id <= 0) out.Add(Indexed("contracts", i) + ".chainId", "must be a positive chain id");
    if (!seen.insert({c.chain_id, c.address}).second) {
      out.Add(Indexed("contracts", i), "duplicate contract");
    }
  }
}

void CheckPricingAndBudget(Problems& out, const store::CampaignRecord& c) {
  if (c.bid_micros <= 0) out.Add("pricing.bid", "must be greater than 0");
  if (c.total_budget_micros && *c.total_budget_micros <= 0) {
    out.Add("budget.total", "must be greater than 0");
  }
  if (c.daily_budget_micros && *c.daily_budget_micros <= 0) {
    out.Add("budget.daily", "must be greater than 0");
  }
  if (c.total_budget_micros && c.daily_budget_micros &&
      *c.daily_budget_micros > *c.total_budget_micros) {
    out.Add("budget.daily", "must not exceed budget.total");
  }
}

// CPA bills onchain conversions, so it needs to know which ones (issue 15).
void CheckConversion(Problems& out, const store::CampaignRecord& c) {
  if (!c.conversion) {
    if (c.pricing_model == PricingModel::kCpa) {
      out.Add("conversion.projects",
              "is required for CPA campaigns (the projects whose onchain "
              "transactions count as conversions)");
    }
    return;
  }
  const store::ConversionRule& rule = *c.conversion;
  if (rule.projects.empty()) out.Add("conversion.projects", "must list at least one project");
  CheckListSize(out, "conversion.projects", rule.projects.size());
  CheckPositiveIds(out, "conversion.projects", rule.projects);
  if (rule.window_days < 1 || rule.window_days > 30) {
    out.Add("conversion.windowDays", "must be between 1 and 30");
  }
  if (rule.returning_after_days < 1 || rule.returning_after_days > 3650) {
    out.Add("conversion.returningAfterDays", "must be between 1 and 3650");
  }
}

void CheckTargeting(Problems& out, const store::CampaignRecord& c) {
  if (c.target_projects.empty()) out.Add("targeting.projects", "must list at least one project");
  CheckListSize(out, "targeting.projects", c.target_projects.size());
  CheckListSize(out, "targeting.excludeProjects", c.exclude_projects.size());
  CheckListSize(out, "targeting.chains", c.chains.size());
  CheckListSize(out, "allowedPublishers", c.allowed_publishers.size());
  CheckPositiveIds(out, "targeting.projects", c.target_projects);
  CheckPositiveIds(out, "targeting.excludeProjects", c.exclude_projects);
  const std::unordered_set<int64_t> targeted(c.target_projects.begin(), c.target_projects.end());
  for (size_t i = 0; i < c.exclude_projects.size(); ++i) {
    if (targeted.contains(c.exclude_projects[i])) {
      out.Add(Indexed("targeting.excludeProjects", i), "project is also targeted");
    }
  }
  for (size_t i = 0; i < c.chains.size(); ++i) {
    if (c.chains[i] <= 0) out.Add(Indexed("targeting.chains", i), "must be a positive chain id");
  }
  if (c.recency_days && (*c.recency_days < 1 || *c.recency_days > 3650)) {
    out.Add("targeting.recencyDays", "must be between 1 and 3650");
  }
}

}  // namespace

long Utf8Length(std::string_view s) {
  long chars = 0;
  for (size_t i = 0; i < s.size(); ++chars) {
    uint32_t cp = 0;
    size_t len = DecodeUtf8(s, i, &cp);
    if (len == 0) return -1;
    i += len;
  }
  return chars;
}

Status ValidatePlainText(std::string_view field, std::string_view text, size_t max_chars) {
  if (auto p = PlainTextProblem(text, max_chars)) {
    return InvalidFieldError(std::string(field), *p);
  }
  return OkStatus();
}

Status ValidateContentMarkup(std::string_view field, std::string_view content) {
  if (auto p = MarkupProblem(content)) return InvalidFieldError(std::string(field), *p);
  return OkStatus();
}

Status ValidateHttpUrl(std::string_view field, std::string_view url) {
  if (auto p = UrlProblem(url)) return InvalidFieldError(std::string(field), *p);
  return OkStatus();
}

Status ValidateOrigin(std::string_view field, std::string_view origin) {
  if (auto p = OriginProblem(origin)) return InvalidFieldError(std::string(field), *p);
  return OkStatus();
}

bool IsValidProjectSlug(std::string_view slug) { return IsValidSlug(slug); }

Status ValidatePublisher(const store::PublisherRecord& p) {
  Problems out;
  CheckPlain(out, "name", p.name, kMaxNameChars);
  CheckListSize(out, "allowedOrigins", p.allowed_origins.size());
  CheckListSize(out, "blockedCommunities", p.blocked_communities.size());
  std::set<std::string_view> seen;
  for (size_t i = 0; i < p.allowed_origins.size(); ++i) {
    if (auto problem = OriginProblem(p.allowed_origins[i])) {
      out.Add(Indexed("allowedOrigins", i), *problem);
    } else if (!seen.insert(p.allowed_origins[i]).second) {
      out.Add(Indexed("allowedOrigins", i), "duplicate origin");
    }
  }
  CheckPositiveIds(out, "blockedCommunities", p.blocked_communities);
  if (!(p.payout.percent >= 0 && p.payout.percent <= 100)) {
    out.Add("payout.percent", "must be a number from 0 to 100");
  }
  if (p.payout.cpm_micros < 0) out.Add("payout.cpm", "must not be negative");
  if (p.rate_limit) {
    if (!(p.rate_limit->per_second > 0 && p.rate_limit->per_second <= 1'000'000)) {
      out.Add("rateLimit.perSecond", "must be a number above 0, at most 1000000");
    }
    if (p.rate_limit->burst < 1 || p.rate_limit->burst > 1'000'000) {
      out.Add("rateLimit.burst", "must be an integer from 1 to 1000000");
    }
  }
  return std::move(out).ToStatus("publisher");
}

Status ValidateCommunity(const store::CommunityRecord& c) {
  Problems out;
  CheckPlain(out, "name", c.name, kMaxNameChars);
  CheckUrl(out, "logoUrl", c.logo_url);
  return std::move(out).ToStatus("community");
}

Status ValidateProject(const store::ProjectRecord& p) {
  Problems out;
  if (!IsValidSlug(p.slug)) out.Add("slug", "must be 1 to 64 characters of [a-z0-9-]");
  CheckPlain(out, "name", p.name, kMaxNameChars);
  if (!p.logo_url.empty()) CheckUrl(out, "logoUrl", p.logo_url);
  if (!p.category.empty()) CheckPlain(out, "category", p.category, kMaxNameChars);
  if (!p.symbol.empty()) CheckPlain(out, "symbol", p.symbol, kMaxSymbolChars);
  CheckContracts(out, p.contracts);
  return std::move(out).ToStatus("project");
}

Status ValidateCampaign(const store::CampaignRecord& c) {
  Problems out;
  if (c.community_id <= 0) out.Add("communityId", "must be a positive id");
  CheckPlain(out, "name", c.name, kMaxNameChars);
  if (c.starts_at && c.ends_at && *c.starts_at >= *c.ends_at) {
    out.Add("endsAt", "must be after startsAt");
  }
  CheckPricingAndBudget(out, c);
  CheckTargeting(out, c);
  CheckConversion(out, c);
  if (c.frequency_cap) {
    if (c.frequency_cap->count < 1) out.Add("frequencyCap.count", "must be at least 1");
    if (c.frequency_cap->hours < 1 || c.frequency_cap->hours > 8760) {
      out.Add("frequencyCap.hours", "must be between 1 and 8760");
    }
  }
  return std::move(out).ToStatus("campaign");
}

Status ValidateAd(const store::AdRecord& a) {
  Problems out;
  if (a.campaign_id <= 0) out.Add("campaignId", "must be a positive id");
  CheckPlain(out, "headline", a.headline, kMaxHeadlineChars);
  if (auto p = MarkupProblem(a.content)) out.Add("content", *p);
  CheckUrl(out, "ctaUrl", a.cta_url);
  CheckPlain(out, "ctaLabel", a.cta_label, kMaxCtaLabelChars);
  // An ad without any image is valid: it serves only NO_IMAGE placements.
  for (int i = 0; i < kImageFormatsWithImage; ++i) {
    const std::string& url = a.images[static_cast<size_t>(i)];
    if (url.empty()) continue;
    CheckUrl(out, "images." + std::string(ImageFormatName(static_cast<ImageFormat>(i))), url);
  }
  if (a.weight < 1 || a.weight > 10000) out.Add("weight", "must be between 1 and 10000");
  return std::move(out).ToStatus("ad");
}

}  // namespace adserver::ingest
