#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace adserver::events {

// One rate-limit window: at most `max` events per `seconds` (fixed windows aligned to
// multiples of `seconds` since the epoch). `max` 0 turns the window off.
struct RateWindow {
  int64_t seconds = 60;
  int64_t max = 0;
  bool operator==(const RateWindow&) const = default;
};

// Invalid-traffic checks on clicks and advertiser events (issue 18 item 1, [traffic]; the
// trusted proxies are http.trusted_proxies). docs/api-notes.md "Invalid traffic" lists the
// reasons in their order.
struct TrafficOptions {
  // Proxies (addresses or CIDRs) whose X-Forwarded-For / Forwarded is believed
  // (http.trusted_proxies); empty: the socket peer is the client.
  std::vector<std::string> trusted_proxies;
  // A click or event without a User-Agent header (or an empty one) is invalid.
  bool require_user_agent = true;
  // A user agent matching the crawler list (third_party/crawler-user-agents) is invalid.
  bool block_crawlers = true;
  // Files of blocked client addresses or CIDRs (one a line, `#` comments), e.g. Tor exit lists
  // or datacenter ranges; re-read when their modification time changes.
  std::vector<std::string> ip_blocklists;
  // How often the blocklist files' modification times are looked at, seconds.
  int64_t blocklist_check_seconds = 5;
  // A click sooner than this after its serve is invalid (0 = off).
  int64_t min_click_delay_ms = 1000;
  // A click whose user agent differs from the serve's is invalid (tokens carry a hash of it).
  bool require_same_user_agent = true;
  // A click whose Referer's origin is not among its publisher's allowed origins is invalid
  // (publishers without allowed origins, and clicks without a Referer, pass).
  bool check_click_origin = true;
  // Clicks per (truncated) client address and per person; any window exceeded is invalid.
  std::vector<RateWindow> click_limits = {{60, 1}, {600, 3}, {3600, 10}, {86400, 25}};
  // Advertiser events (POST /v1/events) per (truncated) client address and per person.
  std::vector<RateWindow> event_limits = {{60, 30}, {600, 120}, {3600, 300}, {86400, 1000}};
  // Served impressions (a live key's 200 on /v1/ads or /api/ads) are checked too: a browser's
  // request (one with an Origin header) for its user agent, the crawler list and the
  // blocklists; every request for the wallet-set anomalies below. An invalid impression is still
  // answered with its ad but bills nothing and counts toward no cap, learned rate or conversion.
  bool check_impressions = true;
  // A wallet served more often than this per minute makes the impression invalid (0 = off).
  int64_t wallet_serves_per_minute = 120;
  // A wallet served under more than this many publishers within `wallet_publishers_seconds`
  // makes the impression invalid (0 = off; at most 64, counted in a 64-bit set of publisher
  // hashes, so a count can fall short of the truth, never exceed it).
  int64_t wallet_max_publishers = 20;
  int64_t wallet_publishers_seconds = 3600;
  // Entries of each serving thread's wallet table (fixed size, 32 bytes an entry; the least
  // recently used of two candidates is reused for a new wallet, forgetting its counts).
  size_t wallet_table_entries = size_t{1} << 16;
  // Entries of the rate-limit table (fixed size, shared by clicks and events; the least
  // recently used of two candidate entries is reused when a new key arrives).
  size_t rate_table_entries = size_t{1} << 18;
};

}  // namespace adserver::events
