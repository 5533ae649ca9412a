#pragma once

// Exposures (issue 15): which wallets were served which campaign's ads, kept so that an onchain
// transaction of a wallet can be attributed to the ad the person saw (view-through) or clicked.
// One record per (wallet, campaign) holding its most recent exposures, so the store grows with
// people x campaigns, not with requests, and is bounded by its map size. Embedded adapter:
// LMDB (store/lmdb/lmdb_exposure_store.h). Thread-safe.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/address.h"
#include "common/status.h"
#include "store/events_store.h"

namespace adserver::store {

// Exposures kept per (wallet, campaign), newest first.
inline constexpr size_t kMaxExposuresPerRecord = 4;
// Longest arm / adUnitId kept with an exposure (longer ones are cut).
inline constexpr size_t kMaxExposureArmBytes = 32;
inline constexpr size_t kMaxExposureAdUnitBytes = 64;

struct ExposureEntry {
  DecisionIdBytes decision_id{};
  int64_t exposed_at = 0;  // Unix seconds of the serve
  Id ad_id = 0;
  Id publisher_id = 0;
  uint64_t person = 0;  // keyed digest of the request's wallet set
  std::string arm;
  std::string ad_unit_id;
  bool operator==(const ExposureEntry&) const = default;
};

struct ExposureRecord {
  // Unix seconds (day precision) of the wallet's latest interaction with the campaign's
  // conversion projects before the record was created; 0 = none (a new user).
  int64_t prior_last_seen = 0;
  std::vector<ExposureEntry> entries;  // newest first, at most kMaxExposuresPerRecord
  bool operator==(const ExposureRecord&) const = default;
};

struct ExposureWrite {
  Address wallet;
  Id campaign_id = 0;
  ExposureEntry entry;
  int64_t prior_last_seen = 0;  // used only when the record is created
};

// Where an expiry sweep stands after one bounded step (ExposureStore::ExpireStep).
struct ExpiryStep {
  int64_t deleted = 0;  // records deleted by this step
  bool done = false;    // the sweep reached the end of the store
  std::string resume;   // the next step's `after` (empty when done)
};

struct ExposureStats {
  int64_t records = 0;
  int64_t bytes = 0;  // pages in use x page size
};

class ExposureStore {
 public:
  virtual ~ExposureStore() = default;
  // Adds each exposure to its (wallet, campaign) record in one write transaction, newest
  // first, keeping kMaxExposuresPerRecord. Unavailable (nothing written) when the store is
  // full: its size is bounded.
  virtual Status AddExposures(std::span<const ExposureWrite> writes) = 0;
  virtual Result<std::optional<ExposureRecord>> Get(const Address& wallet, Id campaign_id) = 0;
  // One bounded step of an expiry sweep: visits at most `max_records` records in key order,
  // starting after the key `after` (empty: from the first), dropping entries exposed before
  // `cutoff` and records left without entries, in one short write transaction. Steps keep
  // the writer lock (and the flush of new exposures) free between them, whatever the size
  // of the store.
  virtual Result<ExpiryStep> ExpireStep(int64_t cutoff, std::string_view after,
                                        size_t max_records) = 0;
  // A whole sweep: ExpireStep until done. Returns the number of records deleted.
  Result<int64_t> ExpireBefore(int64_t cutoff, size_t step_records = 4096) {
    int64_t deleted = 0;
    std::string after;
    for (;;) {
      Result<ExpiryStep> step = ExpireStep(cutoff, after, step_records);
      if (!step.ok()) return step.status();
      deleted += step->deleted;
      if (step->done) return deleted;
      after = std::move(step->resume);
    }
  }
  virtual Result<ExposureStats> Stats() = 0;
};

}  // namespace adserver::store
