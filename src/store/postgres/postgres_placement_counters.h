#pragma once

// Per-placement counts of the nodes of a cluster in PostgreSQL (issue 36 item 6;
// store/placement_counters_store.h): node_placement_counters, one row per (node, campaign,
// publisher) with the node's absolute counts and a seq from one sequence, so that a node reads
// what changed since its last read by an index range; its ad units' rows (issue 36 item 5) in
// node_unit_counters (migration 20) with seqs from the same sequence, read together with them.
// Thread-safe (one connection behind a mutex).

#include <memory>
#include <span>
#include <string>

#include "common/mutex.h"
#include "store/placement_counters_store.h"

namespace adserver::store {

namespace pg_detail {
class PgConnection;
}  // namespace pg_detail

class PostgresPlacementCounters final : public PlacementCountersStore {
 public:
  // `node_id`: the rows this process writes and the ones it does not read as the others'.
  static Result<std::unique_ptr<PostgresPlacementCounters>> Open(const std::string& url,
                                                                 std::string node_id);
  ~PostgresPlacementCounters() override;
  PostgresPlacementCounters(const PostgresPlacementCounters&) = delete;
  PostgresPlacementCounters& operator=(const PostgresPlacementCounters&) = delete;

  Status SaveOwn(std::span<const PlacementCountersRow> rows) override;
  Result<std::vector<PlacementCountersRow>> LoadOwn() override;
  Result<std::vector<PlacementCountersRow>> LoadOthersAfter(int64_t after_seq,
                                                            size_t limit) override;

 private:
  PostgresPlacementCounters(std::unique_ptr<pg_detail::PgConnection> conn, std::string node_id);
  const std::string node_id_;
  Mutex mu_;
  std::unique_ptr<pg_detail::PgConnection> conn_ ADS_GUARDED_BY(mu_);
  // Upserts `rows` into node_placement_counters (publishers) or node_unit_counters (`units`),
  // inside the caller's transaction.
  Status SaveRows(std::span<const PlacementCountersRow> rows, bool units) ADS_REQUIRES(mu_);
};

}  // namespace adserver::store
