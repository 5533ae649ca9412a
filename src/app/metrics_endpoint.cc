#include "app/metrics_endpoint.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "app/indexer.h"
#include "cluster/placements.h"
#include "common/metrics_text.h"
#include "store/lmdb/read_cache_thread.h"

namespace adserver::app {

namespace {

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void AppendProcess(MetricsText& m) {
  const long page = sysconf(_SC_PAGESIZE);
  const long ticks = sysconf(_SC_CLK_TCK);
  std::ifstream statm("/proc/self/statm");
  long size_pages = 0, resident_pages = 0;
  if (statm >> size_pages >> resident_pages) {
    m.Family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
    m.Sample("process_resident_memory_bytes", {}, static_cast<int64_t>(resident_pages) * page);
    m.Family("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
    m.Sample("process_virtual_memory_bytes", {}, static_cast<int64_t>(size_pages) * page);
  }
  int64_t fds = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') ++fds;
    }
    closedir(dir);
    --fds;  // the directory stream's own
  }
  m.Family("process_open_fds", "gauge", "Open file descriptors.");
  m.Sample("process_open_fds", {}, fds);
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    m.Family("process_max_fds", "gauge", "Limit of open file descriptors.");
    m.Sample("process_max_fds", {}, static_cast<uint64_t>(limit.rlim_cur));
  }
  // /proc/self/stat: fields after the command name (which may hold spaces) in parentheses.
  std::ifstream stat_file("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)), {});
  size_t close = stat.rfind(')');
  if (close != std::string::npos && ticks > 0) {
    std::istringstream fields(stat.substr(close + 2));
    std::string f;
    std::vector<std::string> v;
    while (fields >> f) v.push_back(f);
    // v[0] is field 3 (state): utime 14, stime 15, num_threads 20, starttime 22.
    if (v.size() > 19) {
      double cpu = (std::stod(v[11]) + std::stod(v[12])) / static_cast<double>(ticks);
      m.Family("process_cpu_seconds_total", "counter", "User and system CPU time spent.");
      m.Sample("process_cpu_seconds_total", {}, cpu);
      m.Family("process_threads", "gauge", "Threads of the process.");
      m.Sample("process_threads", {}, static_cast<int64_t>(std::stoll(v[17])));
      std::ifstream uptime_file("/proc/uptime");
      double uptime = 0;
      if (uptime_file >> uptime) {
        double started = static_cast<double>(NowSeconds()) - uptime +
                         std::stod(v[19]) / static_cast<double>(ticks);
        m.Family("process_start_time_seconds", "gauge", "Start time since the epoch.");
        m.Sample("process_start_time_seconds", {}, static_cast<int64_t>(started));
      }
    }
  }
}

// The decision engine's learned state: per-placement learning's bounded state (issue 36
// items 5-6) and the fitted conversion delay.
void AppendLearning(const MetricsSources& s, MetricsText& m) {
  if (s.live != nullptr) {
    // Per-placement learning's bounded state (issue 36 item 5): what is tracked, its limit, and
    // what the limit turned away (valued at the campaign's own rate instead).
    const decision::PlacementTracker& tracker = s.live->placements;
    m.Family("adserver_placement_pairs", "gauge",
             "(campaign, publisher) pairs per-placement learning tracks, at the last recompute.");
    m.Sample("adserver_placement_pairs", {}, tracker.published_pairs());
    m.Family("adserver_placement_pairs_limit", "gauge",
             "Most (campaign, publisher) pairs tracked ([decision] placement_pairs).");
    m.Sample("adserver_placement_pairs_limit", {}, static_cast<int64_t>(tracker.max_pairs()));
    m.Family("adserver_placement_untracked_updates_total", "counter",
             "Updates of pairs not tracked because the limit was reached.");
    m.Sample("adserver_placement_untracked_updates_total", {}, tracker.published_dropped());
    m.Family("adserver_placement_feed_dropped_total", "counter",
             "Impressions and events dropped because the limit's worth of pairs was waiting for "
             "the next recompute.");
    m.Sample("adserver_placement_feed_dropped_total", {}, s.live->placement_feed.dropped());
    if (const cluster::ClusterPlacements* shared = s.shared_placements) {
      m.Family(
          "adserver_placement_shared_pairs", "gauge",
          "Cluster mode: this node's (campaign, publisher) pairs shared with the other nodes.");
      m.Sample("adserver_placement_shared_pairs", {}, static_cast<int64_t>(shared->own_pairs()));
      m.Family("adserver_placement_followed_rows", "gauge",
               "Cluster mode: the other nodes' (node, campaign, publisher) rows followed.");
      m.Sample("adserver_placement_followed_rows", {},
               static_cast<int64_t>(shared->followed_rows()));
      m.Family("adserver_placement_shared_dropped_total", "counter",
               "Cluster mode: counts not shared or not followed because a bound was reached.");
      m.Sample("adserver_placement_shared_dropped_total", {}, shared->dropped());
    }
    m.Family("adserver_conversion_delay_fitted_seconds", "gauge",
             "Mean conversion delay fitted to the network's CPA conversions, which their "
             "impressions mature with (0: not fitted yet, or [decision] conversion_delay_days).");
    m.Sample("adserver_conversion_delay_fitted_seconds", {}, s.live->rates.fitted_delay_seconds());
  }
}

// Conversions billed, reverted and over budget.
void AppendConversions(const MetricsSources& s, MetricsText& m) {
  if (s.conversions_billed != nullptr && s.conversions_reverted != nullptr) {
    m.Family("adserver_conversions_total", "counter",
             "Onchain conversions billed (recorded by this process or seen from others), "
             "reverted by a reorg, and recorded past the campaign's total budget (not billed).");
    m.Sample("adserver_conversions_total", {{"status", "billed"}},
             s.conversions_billed->load(std::memory_order_relaxed));
    m.Sample("adserver_conversions_total", {{"status", "reorged"}},
             s.conversions_reverted->load(std::memory_order_relaxed));
    if (s.conversions_over_budget != nullptr) {
      m.Sample("adserver_conversions_total", {{"status", "over_budget"}},
               s.conversions_over_budget->load(std::memory_order_relaxed));
    }
  }
}

// Spend per campaign ([metrics] campaign_spend).
void AppendCampaignSpend(const MetricsSources& s, MetricsText& m) {
  if (s.ledger != nullptr) {
    m.Family("adserver_campaign_spend_total", "counter",
             "Spend per campaign since it was created, in the campaigns' currency units.");
    m.Family("adserver_campaign_spend_today", "gauge", "Spend per campaign today (UTC).");
    const int64_t today = NowSeconds() / 86400;
    for (const decision::CampaignCounters& c : s.ledger->All()) {
      const std::string id = std::to_string(c.campaign_id);
      m.Sample("adserver_campaign_spend_total", {{"campaign", id}},
               static_cast<double>(c.total_spend) / 1e6);
      m.Sample("adserver_campaign_spend_today", {{"campaign", id}},
               c.day == today ? static_cast<double>(c.day_spend) / 1e6 : 0.0);
    }
  }
}

// Catalog and activity snapshots.
void AppendSnapshots(const MetricsSources& s, MetricsText& m) {
  if (s.catalogs != nullptr && s.activity != nullptr) {
    m.Family("adserver_snapshot_version", "gauge",
             "Snapshots published since start (a new one per change), by snapshot.");
    m.Sample("adserver_snapshot_version", {{"snapshot", "catalog"}}, s.catalogs->version());
    m.Sample("adserver_snapshot_version", {{"snapshot", "activity"}}, s.activity->version());
  }
  if (s.snapshots != nullptr) {
    m.Family("adserver_snapshot_build_seconds", "gauge", "How long the last build took, by snapshot.");
    m.Sample("adserver_snapshot_build_seconds", {{"snapshot", "catalog"}},
             static_cast<double>(s.snapshots->catalog_build_ms()) / 1e3);
    m.Sample("adserver_snapshot_build_seconds", {{"snapshot", "activity"}},
             static_cast<double>(s.snapshots->activity_build_ms()) / 1e3);
    m.Family("adserver_catalog_published_timestamp_seconds", "gauge",
             "When the catalog in use was published.");
    m.Sample("adserver_catalog_published_timestamp_seconds", {}, s.snapshots->catalog_published_at());
  }
}

// The wallet table that answers lookups.
void AppendWalletTable(const MetricsSources& s, MetricsText& m) {
  m.Family("adserver_wallet_table_state", "gauge",
           "Wallet lookups: 1 for the current state (off, building: from LMDB, ready: from the "
           "table), 0 for the others.");
  std::string_view state = "off";
  store::ReadCacheStatus table;
  if (s.wallet_table != nullptr) {
    table = s.wallet_table->GetStatus();
    state = table.table ? "ready" : "building";
  }
  for (std::string_view st : {"off", "building", "ready"}) {
    m.Sample("adserver_wallet_table_state", {{"state", st}}, int64_t{st == state ? 1 : 0});
  }
  if (s.wallet_table != nullptr) {
    m.Family("adserver_wallet_table_in_memory", "gauge",
             "1 when the table is served from its copy in memory.");
    m.Sample("adserver_wallet_table_in_memory", {}, int64_t{table.table_in_memory ? 1 : 0});
    m.Family("adserver_wallet_table_wallets", "gauge", "Wallet entries in the table.");
    m.Sample("adserver_wallet_table_wallets", {}, table.table_wallets);
    m.Family("adserver_wallet_table_recent_wallets", "gauge",
             "Wallets changed since the table was built (looked up in LMDB until a rebuild).");
    m.Sample("adserver_wallet_table_recent_wallets", {}, table.recent_wallets);
  }
  if (s.read_cache != nullptr) {
    m.Family("adserver_wallet_table_age_seconds", "gauge",
             "Time since the table in use was built or first seen by this process.");
    const int64_t since = s.read_cache->table_since();
    m.Sample("adserver_wallet_table_age_seconds", {}, since == 0 ? int64_t{0} : NowSeconds() - since);
    m.Family("adserver_wallet_table_rebuilds_total", "counter", "Wallet table rebuilds.");
    m.Sample("adserver_wallet_table_rebuilds_total", {}, s.read_cache->rebuilds());
  }
}

// The live indexer's progress.
void AppendIndexer(const MetricsSources& s, MetricsText& m) {
  if (s.indexer != nullptr) {
    if (std::optional<ingest::chain::ChainIndexer::Progress> p = s.indexer->progress()) {
      const std::string chain = std::to_string(s.chain_id);
      uint64_t lag = p->next_block == 0 || p->head + 1 < p->next_block ? 0 : p->head + 1 - p->next_block;
      uint64_t applied = p->next_block == 0 ? 0 : p->next_block - 1;
      m.Family("adserver_indexer_head_block", "gauge", "The node's head at the indexer's last step.");
      m.Sample("adserver_indexer_head_block", {{"chain", chain}}, p->head);
      m.Family("adserver_indexer_applied_block", "gauge", "The last block applied.");
      m.Sample("adserver_indexer_applied_block", {{"chain", chain}}, applied);
      m.Family("adserver_indexer_lag_blocks", "gauge",
               "Blocks behind the head, confirmations included.");
      m.Sample("adserver_indexer_lag_blocks", {{"chain", chain}}, lag);
    }
  }
}

// The identity state the server keeps.
void AppendIdentity(const MetricsSources& s, MetricsText& m) {
  if (s.identity != nullptr) {
    m.Family("adserver_identity_erasures", "gauge",
             "Wallets erased within the retention period (the identity state the server keeps: "
             "identities themselves live in sealed cookies and localIds).");
    m.Sample("adserver_identity_erasures", {}, static_cast<uint64_t>(s.identity->erasure_count()));
  }
}

}  // namespace

std::string RenderMetrics(const MetricsSources& s) {
  std::string out;
  out.reserve(32 * 1024);
  MetricsText m(out);
  if (s.http != nullptr) s.http->AppendMetrics(out);
  if (s.ads != nullptr) s.ads->AppendMetrics(m);
  if (s.events != nullptr) s.events->AppendMetrics(m);
  if (s.advertiser_events != nullptr) s.advertiser_events->AppendMetrics(m);
  AppendLearning(s, m);
  AppendConversions(s, m);
  AppendCampaignSpend(s, m);
  AppendSnapshots(s, m);
  AppendWalletTable(s, m);
  AppendIndexer(s, m);
  AppendIdentity(s, m);
  AppendProcess(m);
  return out;
}

}  // namespace adserver::app
