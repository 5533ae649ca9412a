#pragma once

// Serving counters per minute x publisher x adUnitId x campaign x ad x arm, kept per serving
// thread (each thread writes its own shard; the flusher swaps shards out once per interval, the
// only time a shard's mutex is contended) and summed into rollup rows when flushed.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "common/thread_shards.h"
#include "common/types.h"
#include "events/traffic_checks.h"
#include "store/events_store.h"

namespace adserver::events {

// How one ad request for a live key ended.
enum class ServeOutcome : uint8_t { kFill, kNoFill, kError };

struct ServedKey {
  int64_t unix_seconds = 0;  // floored to the minute
  int64_t publisher_id = 0;
  std::string_view ad_unit_id;
  int64_t campaign_id = 0;  // 0 unless kFill
  int64_t ad_id = 0;
  std::string_view arm;
};

// The adUnitId rows of adUnitIds beyond a shard's limit are counted under.
inline constexpr std::string_view kOtherAdUnit = "~other";

class ServedCounters {
 public:
  // `max_keys_per_thread`: distinct rows a thread's shard holds between Take()s; further
  // adUnitIds are counted under kOtherAdUnit.
  explicit ServedCounters(size_t max_keys_per_thread = 65536);
  ~ServedCounters();
  ServedCounters(const ServedCounters&) = delete;
  ServedCounters& operator=(const ServedCounters&) = delete;

  // Counts one request (and, for kFill, one impression costing `spend`). A fill with an
  // `invalid` reason (events/traffic_checks.h) is counted apart, under that reason, and costs
  // nothing. Thread-safe; takes only the calling thread's uncontended shard lock and allocates
  // only for a new row.
  void Count(const ServedKey& key, ServeOutcome outcome, Micros spend = 0,
             InvalidReason invalid = InvalidReason::kNone);
  // Everything counted since the previous call, one row per key (bucket = minute start).
  std::vector<store::RollupRow> Take();

 private:
  struct Counts {
    int64_t requests = 0;
    int64_t fills = 0;
    int64_t no_fills = 0;
    int64_t errors = 0;
    Micros spend = 0;
    int64_t invalid_fills = 0;
    std::array<int32_t, kInvalidReasons> invalid{};  // by InvalidReason
  };
  // A row's dimensions; looked up by a RowKeyView without building one.
  struct RowKey {
    int64_t minute = 0;
    int64_t publisher_id = 0;
    int64_t campaign_id = 0;
    int64_t ad_id = 0;
    std::string arm;
    std::string ad_unit_id;
  };
  struct RowKeyView {
    int64_t minute = 0;
    int64_t publisher_id = 0;
    int64_t campaign_id = 0;
    int64_t ad_id = 0;
    std::string_view arm;
    std::string_view ad_unit_id;
  };
  static RowKeyView View(const RowKey& k) {
    return {k.minute, k.publisher_id, k.campaign_id, k.ad_id, k.arm, k.ad_unit_id};
  }
  struct RowKeyHash {
    using is_transparent = void;
    size_t operator()(const RowKeyView& k) const noexcept;
    size_t operator()(const RowKey& k) const noexcept { return (*this)(View(k)); }
  };
  struct RowKeyEqual {
    using is_transparent = void;
    static bool Same(const RowKeyView& a, const RowKeyView& b) {
      return a.minute == b.minute && a.publisher_id == b.publisher_id &&
             a.campaign_id == b.campaign_id && a.ad_id == b.ad_id && a.arm == b.arm &&
             a.ad_unit_id == b.ad_unit_id;
    }
    bool operator()(const RowKey& a, const RowKey& b) const { return Same(View(a), View(b)); }
    bool operator()(const RowKeyView& a, const RowKey& b) const { return Same(a, View(b)); }
    bool operator()(const RowKey& a, const RowKeyView& b) const { return Same(View(a), b); }
  };
  using Rows = std::unordered_map<RowKey, Counts, RowKeyHash, RowKeyEqual>;
  struct Shard {
    Mutex mu;
    Rows rows ADS_GUARDED_BY(mu);
  };
  const size_t max_keys_;
  ThreadShards<Shard> shards_;
};

}  // namespace adserver::events
