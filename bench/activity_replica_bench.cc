// Times a cluster node's first start (issue 17 item 4: a new node with 10 M wallets in the
// cluster is ready in <= 2 minutes): loads N wallets of 1-3 activity rows each into
// PostgreSQL's wallet_activity, then bootstraps an empty LMDB index from it with
// cluster::ActivityReplica (a snapshot through a server-side cursor, appended with LoadSorted).
//
//   tests/support/postgres.sh start /tmp/pg-bench
//   build/adserver-activity-replica-bench --url "$(cat /tmp/pg-bench/url)/postgres"
//       --wallets 1000000 --dir /tmp/replica-bench   (one command line)
//
// The load skips the change log triggers and foreign keys (session_replication_role =
// replica: a bench shortcut, not how nodes write) and is reused when the table already holds
// that many wallets (--reload to force it). Dev only.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cluster/activity_replica.h"
#include "store/postgres/detail/pg_connection.h"
#include "store/postgres/postgres_store.h"

namespace {

using namespace adserver;
using store::ActivityRecord;
using store::ProjectRecord;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Status Fail(const Status& st, const char* what) {
  std::fprintf(stderr, "%s: %s\n", what, st.message().c_str());
  return st;
}

// Three projects (the rows' project ids).
Result<std::string> Projects(const std::string& url) {
  ADS_ASSIGN_OR_RETURN(auto inventory, store::PostgresStore::Open(url));
  ADS_ASSIGN_OR_RETURN(auto projects, inventory->ListProjects());
  for (int i = static_cast<int>(projects.size()); i < 3; ++i) {
    ProjectRecord p;
    p.slug = p.name = std::string("bench-").append(std::to_string(i));
    ADS_ASSIGN_OR_RETURN(ProjectRecord created, inventory->CreateProject(p, 1'767'225'600));
    projects.push_back(created);
  }
  std::string ids;
  for (int i = 0; i < 3; ++i) ids.append(i == 0 ? "{" : ",").append(std::to_string(projects[i].id));
  return ids.append("}");
}

// Wallet i (pseudo-random bytes, so heap order is not wallet order) gets 1 + i % 3 rows.
Status Load(const std::string& url, int64_t wallets, bool reload) {
  ADS_ASSIGN_OR_RETURN(std::string projects, Projects(url));
  ADS_ASSIGN_OR_RETURN(auto conn, store::pg_detail::PgConnection::Open(url));
  ADS_ASSIGN_OR_RETURN(auto have, conn->Exec("SELECT count(DISTINCT wallet) FROM wallet_activity"));
  ADS_ASSIGN_OR_RETURN(int64_t present, have.Int(0, 0));
  if (present == wallets && !reload) {
    std::printf("reusing %lld wallets already in PostgreSQL\n", static_cast<long long>(present));
    return OkStatus();
  }
  ADS_RETURN_IF_ERROR(conn->ExecScript("SET session_replication_role = replica; "
                                       "TRUNCATE wallet_activity; TRUNCATE activity_changes"));
  const auto start = std::chrono::steady_clock::now();
  constexpr int64_t kChunk = 1'000'000;
  for (int64_t from = 1; from <= wallets; from += kChunk) {
    int64_t to = std::min(wallets, from + kChunk - 1);
    ADS_RETURN_IF_ERROR(
        conn->Exec("INSERT INTO wallet_activity (wallet, project_id, chain_id, last_seen, count) "
                   "SELECT decode(md5(i::text) || substr(md5((-i)::text), 1, 8), 'hex'), "
                   "($3::bigint[])[p], 1 + i % 2, 1700000000 + (i % 1000) * 86400, 1 + i % 7 "
                   "FROM generate_series($1::bigint, $2::bigint) AS i "
                   "CROSS JOIN LATERAL generate_series(1, 1 + (i % 3)::int) AS p",
                   {store::pg_detail::Param(from), store::pg_detail::Param(to), projects})
            .status());
    std::printf("loaded %lld wallets (%.0f s)\n", static_cast<long long>(to), SecondsSince(start));
  }
  ADS_RETURN_IF_ERROR(conn->ExecScript("VACUUM ANALYZE wallet_activity"));
  std::printf("load + vacuum: %.1f s\n", SecondsSince(start));
  return OkStatus();
}

Status Bootstrap(const std::string& url, const std::string& dir) {
  std::filesystem::remove_all(dir);
  ADS_ASSIGN_OR_RETURN(auto source, store::PostgresActivityStore::Open(url));
  ADS_ASSIGN_OR_RETURN(auto index, store::LmdbActivityIndex::Open(dir));
  cluster::ActivityReplica replica(*source, *index);
  const auto start = std::chrono::steady_clock::now();
  ADS_RETURN_IF_ERROR(replica.Step());
  const double seconds = SecondsSince(start);
  ADS_ASSIGN_OR_RETURN(auto stats, index->GetStats());
  uint64_t rows = 0;
  ADS_RETURN_IF_ERROR(index->Scan([&](const ActivityRecord&) { ++rows; }));
  std::printf(
      "bootstrap: %llu wallets, %llu rows in %.2f s: %.0f wallets/s, %.0f rows/s; "
      "LMDB %.0f MB; projected for 10 M wallets: %.0f s\n",
      static_cast<unsigned long long>(stats.wallets), static_cast<unsigned long long>(rows),
      seconds, stats.wallets / seconds, rows / seconds, stats.file_bytes / 1e6,
      10e6 / (stats.wallets / seconds));
  return OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  std::string url, dir = "/tmp/adserver-replica-bench";
  int64_t wallets = 1'000'000;
  bool reload = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--url" && i + 1 < argc) url = argv[++i];
    else if (arg == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (arg == "--wallets" && i + 1 < argc) wallets = std::atoll(argv[++i]);
    else if (arg == "--reload") reload = true;
  }
  if (url.empty() || wallets <= 0) {
    std::fprintf(stderr, "usage: %s --url URL [--wallets N] [--dir DIR] [--reload]\n", argv[0]);
    return 2;
  }
  Status st = Load(url, wallets, reload);
  if (!st.ok()) return Fail(st, "load").ok() ? 0 : 1;
  st = Bootstrap(url, dir);
  if (!st.ok()) return Fail(st, "bootstrap").ok() ? 0 : 1;
  return 0;
}
