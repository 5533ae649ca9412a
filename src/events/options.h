#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace adserver::events {

struct EventsOptions {
  // Click-token key ring, "<id>:<64 hex>" entries separated by commas (the first seals; all
  // open), like identity.keys. Empty: the installation's own key, made once and kept in the
  // store, so tokens survive restarts. Set it explicitly to rotate (put the new key first and
  // keep the old one until events.click_ttl_seconds has passed).
  std::string keys;
  // A click on a token older than this still redirects but is recorded as expired, not billed.
  int64_t click_ttl_seconds = 86400;
  // Serving counters (requests, fills, no-fills, errors) are written this often; a kill -9 can
  // lose at most this much of them (SIGTERM loses none). Clicks are written before their 302.
  std::chrono::milliseconds flush_interval{1000};
  // Clicks committed per transaction at most (group commit).
  size_t max_click_batch = 512;
  // Clicks waiting to be written at most; beyond, a click is answered 503 (Retry-After: 1).
  size_t max_pending_clicks = 8192;
  // Distinct (minute, publisher, adUnitId, campaign, ad, arm) rows a serving thread keeps
  // between flushes; beyond, new adUnitIds are counted under "~other".
  size_t max_rollup_keys_per_thread = 65536;
  // Retention: raw click rows, minute rollups, hour rollups (daily rollups are kept forever).
  int64_t raw_retention_days = 90;
  int64_t minute_rollup_retention_hours = 48;
  int64_t hour_rollup_retention_days = 400;
  // Upper bound of the exposure store (DATA_DIR/exposures.lmdb), bytes: its size cap.
  size_t exposure_map_bytes = size_t{4} << 30;
  // Commit clicks with synchronous=FULL (survive power loss, not only a process crash).
  bool synchronous_full = false;
};

}  // namespace adserver::events
