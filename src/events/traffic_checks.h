#pragma once

// Invalid-traffic checks on clicks and advertiser events (issue 18 item 1). Each check is a
// small function; TrafficChecks runs them in a fixed order and the first that fails names the
// reason (docs/api-notes.md "Invalid traffic"). An invalid click still redirects and an
// invalid event is still answered 200, but neither bills nor counts.
//
// Order for a click (before these, the token must open, else 400; then an expired token is
// `expired` and a decision already billed is `duplicate`, both decided outside this class):
//   invalid_impression, missing_user_agent, crawler, blocked_ip, too_fast, user_agent_mismatch, origin_not_allowed,
//   ip_rate_limit, person_rate_limit.
// For an advertiser event: missing_user_agent, crawler, blocked_ip, ip_rate_limit,
// person_rate_limit. Rate limits count only what reached them.
// For a served impression: (a browser's request only) missing_user_agent, crawler, blocked_ip;
// then wallet_rate, wallet_publishers (every wallet of every checked impression is counted).

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/ip_address.h"
#include "events/crawler_matcher.h"
#include "events/ip_blocklist.h"
#include "events/traffic_limiter.h"
#include "events/traffic_options.h"
#include "events/wallet_anomalies.h"

namespace adserver::events {

enum class InvalidReason : uint8_t {
  kNone,
  kMissingUserAgent,
  kCrawler,
  kBlockedIp,
  kTooFast,
  kUserAgentMismatch,
  kOriginNotAllowed,
  kIpRateLimit,
  kPersonRateLimit,
  kWalletRate,        // served impressions: a wallet served too often a minute
  kWalletPublishers,  // served impressions: a wallet served under too many publishers
  kInvalidImpression,  // clicks: the ad's served impression was invalid
};
inline constexpr size_t kInvalidReasons = static_cast<size_t>(InvalidReason::kInvalidImpression) + 1;
// "missing_user_agent", "crawler", ...; "" for kNone.
std::string_view InvalidReasonName(InvalidReason reason);

// What a click's checks look at.
struct ClickFacts {
  std::string_view user_agent;  // "" = none sent
  std::optional<IpAddress> ip;  // the client's full address (http::ClientIp); nullopt = unknown
  uint64_t person = 0;          // the token's person digest
  // When the click's ad was served and when it was clicked, Unix milliseconds; served_at_ms
  // nullopt for tokens sealed before the serve's milliseconds were recorded.
  std::optional<int64_t> served_at_ms;
  int64_t clicked_at_ms = 0;
  // UserAgentHash of the serve's User-Agent; nullopt for tokens without one.
  std::optional<uint32_t> serve_user_agent_hash;
  // The served impression failed its own checks (the token says so).
  bool invalid_impression = false;
  // The click's Referer header ("" = none sent) and the allowed origins of the token's
  // publisher (sorted; empty = any origin, as for /v1/ads).
  std::string_view referer;
  std::span<const std::string> allowed_origins;
};

// What an advertiser event's checks look at.
struct EventFacts {
  std::string_view user_agent;
  std::optional<IpAddress> ip;
  uint64_t person = 0;
  int64_t now_seconds = 0;
};

// What a served impression's checks look at (a live key's ad, before it is billed).
struct ImpressionFacts {
  std::string_view user_agent;
  std::optional<IpAddress> ip;
  // A browser's request (it sent an Origin header): its user agent and address are the
  // visitor's. A publisher's backend calling the server entry (no Origin) sends its own, so
  // those checks are skipped for it; the wallet checks run for both.
  bool browser = false;
  std::span<const Address> wallets;
  int64_t publisher_id = 0;
  int64_t now_seconds = 0;
};

// The single checks, each pure.
bool IsMissingUserAgent(std::string_view user_agent);
// True when the click came sooner than `min_delay_ms` after its serve (0 = off; unknown serve
// times pass).
bool IsTooFast(std::optional<int64_t> served_at_ms, int64_t clicked_at_ms, int64_t min_delay_ms);
// True when the serve's user-agent hash is known and differs from the click's.
bool IsUserAgentMismatch(std::optional<uint32_t> serve_hash, std::string_view click_user_agent);
// The origin ("https://news.example[:port]") of a Referer URL; "" when it has none.
std::string_view RefererOrigin(std::string_view referer);
// True when the publisher restricts origins, the click names a page (Referer) and that page's
// origin is not one of them. A click without a Referer (policies strip it) passes.
bool IsOriginNotAllowed(std::string_view referer, std::span<const std::string> allowed_origins);

class TrafficChecks {
 public:
  // `crawlers` and `blocklist` must outlive this; `blocklist` may be null (no lists).
  TrafficChecks(const TrafficOptions& options, const CrawlerMatcher& crawlers,
                const IpBlocklist* blocklist);
  TrafficChecks(const TrafficChecks&) = delete;
  TrafficChecks& operator=(const TrafficChecks&) = delete;

  // The first failing check of a click, or kNone. Counts the click in the rate limits when it
  // gets that far. Thread-safe; allocation-free.
  InvalidReason CheckClick(const ClickFacts& click);
  // The same for an advertiser event.
  InvalidReason CheckEvent(const EventFacts& event);
  // The same for a served impression (kNone when options().check_impressions is off). Counts
  // the impression's wallets in the anomaly table.
  InvalidReason CheckImpression(const ImpressionFacts& impression);

  const TrafficOptions& options() const { return options_; }

 private:
  enum class KeyKind : uint8_t { kClickIp = 1, kClickPerson, kEventIp, kEventPerson };
  InvalidReason CheckAgentAndAddress(std::string_view user_agent,
                                     const std::optional<IpAddress>& ip) const;
  InvalidReason CheckRates(KeyKind ip_kind, KeyKind person_kind, const std::optional<IpAddress>& ip,
                           uint64_t person, std::span<const RateWindow> windows, int64_t now);
  uint64_t KeyOf(KeyKind kind, const uint8_t* bytes, size_t size) const;

  const TrafficOptions options_;
  const CrawlerMatcher& crawlers_;
  const IpBlocklist* blocklist_;
  TrafficLimiter limiter_;
  std::unique_ptr<WalletAnomalies> wallets_;  // null when impressions are not checked
  std::array<uint8_t, 16> key_secret_;  // keys table entries; random per process
};

}  // namespace adserver::events
