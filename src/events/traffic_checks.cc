#include "events/traffic_checks.h"

#include <sodium.h>

#include <algorithm>
#include <cstring>

#include "common/check.h"
#include "common/crypto.h"
#include "events/click_token.h"

namespace adserver::events {

std::string_view InvalidReasonName(InvalidReason reason) {
  switch (reason) {
    case InvalidReason::kNone:
      return "";
    case InvalidReason::kMissingUserAgent:
      return "missing_user_agent";
    case InvalidReason::kCrawler:
      return "crawler";
    case InvalidReason::kBlockedIp:
      return "blocked_ip";
    case InvalidReason::kTooFast:
      return "too_fast";
    case InvalidReason::kUserAgentMismatch:
      return "user_agent_mismatch";
    case InvalidReason::kOriginNotAllowed:
      return "origin_not_allowed";
    case InvalidReason::kIpRateLimit:
      return "ip_rate_limit";
    case InvalidReason::kPersonRateLimit:
      return "person_rate_limit";
    case InvalidReason::kWalletRate:
      return "wallet_rate";
    case InvalidReason::kWalletPublishers:
      return "wallet_publishers";
    case InvalidReason::kInvalidImpression:
      return "invalid_impression";
  }
  return "";
}

bool IsMissingUserAgent(std::string_view user_agent) {
  return user_agent.find_first_not_of(" \t") == std::string_view::npos;
}

bool IsTooFast(std::optional<int64_t> served_at_ms, int64_t clicked_at_ms, int64_t min_delay_ms) {
  if (min_delay_ms <= 0 || !served_at_ms) return false;
  return clicked_at_ms - *served_at_ms < min_delay_ms;
}

bool IsUserAgentMismatch(std::optional<uint32_t> serve_hash, std::string_view click_user_agent) {
  return serve_hash && *serve_hash != UserAgentHash(click_user_agent);
}

std::string_view RefererOrigin(std::string_view referer) {
  size_t scheme = referer.find("://");
  if (scheme == std::string_view::npos || scheme == 0) return {};
  size_t end = referer.find_first_of("/?#", scheme + 3);
  if (end == scheme + 3) return {};
  return referer.substr(0, end);
}

bool IsOriginNotAllowed(std::string_view referer, std::span<const std::string> allowed_origins) {
  if (allowed_origins.empty() || referer.empty()) return false;
  std::string_view origin = RefererOrigin(referer);
  return std::find(allowed_origins.begin(), allowed_origins.end(), origin) == allowed_origins.end();
}

TrafficChecks::TrafficChecks(const TrafficOptions& options, const CrawlerMatcher& crawlers,
                             const IpBlocklist* blocklist)
    : options_(options),
      crawlers_(crawlers),
      blocklist_(blocklist),
      limiter_(options.rate_table_entries) {
  ADS_CHECK(InitCrypto()) << "libsodium cannot be initialised";
  if (options.check_impressions) {
    wallets_ = std::make_unique<WalletAnomalies>(
        WalletAnomalyLimits{.serves_per_minute = options.wallet_serves_per_minute,
                            .max_publishers = options.wallet_max_publishers,
                            .publishers_seconds = options.wallet_publishers_seconds,
                            .entries = options.wallet_table_entries});
  }
  randombytes_buf(key_secret_.data(), key_secret_.size());
}

uint64_t TrafficChecks::KeyOf(KeyKind kind, const uint8_t* bytes, size_t size) const {
  uint8_t input[1 + 16];
  ADS_CHECK(size <= 16) << "rate key too long";
  input[0] = static_cast<uint8_t>(kind);
  std::memcpy(input + 1, bytes, size);
  uint64_t h = 0;
  crypto_shorthash(reinterpret_cast<unsigned char*>(&h), input, 1 + size, key_secret_.data());
  return h;
}

InvalidReason TrafficChecks::CheckAgentAndAddress(std::string_view user_agent,
                                                  const std::optional<IpAddress>& ip) const {
  if (options_.require_user_agent && IsMissingUserAgent(user_agent)) {
    return InvalidReason::kMissingUserAgent;
  }
  if (options_.block_crawlers && crawlers_.Matches(user_agent)) return InvalidReason::kCrawler;
  if (blocklist_ != nullptr && ip && blocklist_->Contains(*ip)) return InvalidReason::kBlockedIp;
  return InvalidReason::kNone;
}

InvalidReason TrafficChecks::CheckRates(KeyKind ip_kind, KeyKind person_kind,
                                        const std::optional<IpAddress>& ip, uint64_t person,
                                        std::span<const RateWindow> windows, int64_t now) {
  if (ip) {
    // Keyed by the truncated address (/24, /48): what a household or small network shares.
    IpAddress truncated = TruncateIp(*ip);
    if (limiter_.Hit(KeyOf(ip_kind, truncated.bytes.data(), truncated.bytes.size()), windows,
                     now)) {
      return InvalidReason::kIpRateLimit;
    }
  }
  if (person == 0) return InvalidReason::kNone;  // no person known
  uint8_t person_bytes[8];
  std::memcpy(person_bytes, &person, sizeof(person));
  if (limiter_.Hit(KeyOf(person_kind, person_bytes, sizeof(person_bytes)), windows, now)) {
    return InvalidReason::kPersonRateLimit;
  }
  return InvalidReason::kNone;
}

InvalidReason TrafficChecks::CheckClick(const ClickFacts& click) {
  if (click.invalid_impression) return InvalidReason::kInvalidImpression;
  if (InvalidReason r = CheckAgentAndAddress(click.user_agent, click.ip);
      r != InvalidReason::kNone) {
    return r;
  }
  if (IsTooFast(click.served_at_ms, click.clicked_at_ms, options_.min_click_delay_ms)) {
    return InvalidReason::kTooFast;
  }
  if (options_.require_same_user_agent &&
      IsUserAgentMismatch(click.serve_user_agent_hash, click.user_agent)) {
    return InvalidReason::kUserAgentMismatch;
  }
  if (options_.check_click_origin && IsOriginNotAllowed(click.referer, click.allowed_origins)) {
    return InvalidReason::kOriginNotAllowed;
  }
  return CheckRates(KeyKind::kClickIp, KeyKind::kClickPerson, click.ip, click.person,
                    options_.click_limits, click.clicked_at_ms / 1000);
}

InvalidReason TrafficChecks::CheckEvent(const EventFacts& event) {
  if (InvalidReason r = CheckAgentAndAddress(event.user_agent, event.ip);
      r != InvalidReason::kNone) {
    return r;
  }
  return CheckRates(KeyKind::kEventIp, KeyKind::kEventPerson, event.ip, event.person,
                    options_.event_limits, event.now_seconds);
}

InvalidReason TrafficChecks::CheckImpression(const ImpressionFacts& impression) {
  if (wallets_ == nullptr) return InvalidReason::kNone;
  InvalidReason reason = InvalidReason::kNone;
  if (impression.browser) reason = CheckAgentAndAddress(impression.user_agent, impression.ip);
  // The wallets are counted even when an earlier check failed: a bot's serves are serves.
  WalletAnomalies::Verdict verdict =
      wallets_->Serve(impression.wallets, impression.publisher_id, impression.now_seconds);
  if (reason != InvalidReason::kNone) return reason;
  switch (verdict) {
    case WalletAnomalies::Verdict::kServeRate:
      return InvalidReason::kWalletRate;
    case WalletAnomalies::Verdict::kPublishers:
      return InvalidReason::kWalletPublishers;
    case WalletAnomalies::Verdict::kNone:
      break;
  }
  return InvalidReason::kNone;
}

}  // namespace adserver::events
