// Upgrades (issue 19 item 7): a data directory written by an earlier release opens with this
// one. Each tests/fixtures/upgrade/<release>/ holds what tests/fixtures/upgrade/make-fixture.sh
// wrote with that release's binary (its adserver.db as `sqlite3 .dump`, its LMDB environments as
// `mdb_copy -c`, its import ledger, and fixture.json). The test rebuilds the directory, starts
// this binary on it, and checks that the migrations ran and that the earlier release's
// publisher key, campaign, wallet activity, served impression, billed click and click-token key
// all still work.
#include <sqlite3.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "integration/server_process.h"
#include "store/sqlite/detail/migrations.h"
#include "support/http_client.h"
#include "support/temp_dir.h"

namespace adserver::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs a `sqlite3 .dump` script into a new database file; empty on success, else the error.
std::string LoadDump(const fs::path& dump, const fs::path& db_path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(db_path.c_str(), &db) != SQLITE_OK) return "open " + db_path.string();
  char* message = nullptr;
  std::string error;
  if (sqlite3_exec(db, ReadAll(dump).c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    error = message ? message : "exec failed";
  }
  sqlite3_free(message);
  sqlite3_close(db);
  return error;
}

// The first column of the first row as text ("" if none).
std::string Query(const fs::path& db_path, const char* sql) {
  sqlite3* db = nullptr;
  std::string value;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(stmt, 0);
      if (text) value = reinterpret_cast<const char*>(text);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return value;
}

std::vector<fs::path> Fixtures() {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(ADSERVER_UPGRADE_FIXTURES)) {
    if (entry.is_directory() && fs::exists(entry.path() / "fixture.json")) {
      dirs.push_back(entry.path());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

void CheckUpgrade(const fs::path& fixture) {
  const json f = json::parse(ReadAll(fixture / "fixture.json"));
  const int latest = store::sqlite_detail::LatestSchemaVersion();
  ASSERT_LE(f.at("schemaVersion").get<int>(), latest) << "fixture newer than this release";

  TempDir dir;
  const fs::path data = dir.File("data");
  fs::create_directories(data);
  ASSERT_EQ(LoadDump(fixture / "adserver.sql", data / "adserver.db"), "");
  for (const char* env : {"activity.lmdb", "exposures.lmdb"}) {
    fs::copy(fixture / env, data / env, fs::copy_options::recursive);
  }
  fs::copy_file(fixture / "imports.ledger", data / "imports.ledger");

  ServerProcess::Options options;
  options.data_dir = data.string();
  options.admin_token = f.at("adminToken").get<std::string>();
  options.extra_args = {"--io-threads", "1"};
  ServerProcess server(options);
  ASSERT_TRUE(server.Start()) << server.error() << server.Output();
  HttpClient client("127.0.0.1", server.port());
  const HttpHeaders admin = {{"Authorization", "Bearer " + options.admin_token}};
  const std::string campaign = std::to_string(f.at("campaignId").get<int64_t>());

  // The earlier release's live key serves its campaign's ad to the wallet it indexed.
  json request = {{"walletAddresses", {f.at("wallet")}},
                  {"imageFormat", "LANDSCAPE"},
                  {"adUnitId", f.at("adUnitId")}};
  HttpResult ad = client.Send(
      "POST", "/v1/ads",
      {{"Content-Type", "application/json"}, {"x-api-key", f.at("key").get<std::string>()}},
      request.dump());
  ASSERT_EQ(ad.status, 200) << ad.body;
  json answer = json::parse(ad.body);
  EXPECT_NE(answer.at("ctaUrl").get<std::string>().find("/v1/click/"), std::string::npos);

  // Its click token still opens (the click key was kept in adserver.db): the redirect works,
  // and the replay is not billed again.
  HttpResult click = client.Send("GET", f.at("clickPath").get<std::string>(),
                                 {{"User-Agent", "Mozilla/5.0 (X11; Linux x86_64) upgrade"}});
  ASSERT_EQ(click.status, 302) << click.body;
  EXPECT_EQ(click.Header("Location").rfind(f.at("ctaUrl").get<std::string>() + "&spclid=", 0),
            0u)
      << click.Header("Location");

  HttpResult clicks =
      client.Send("GET", "/admin/v1/clicks?campaignId=" + campaign, admin);
  ASSERT_EQ(clicks.status, 200) << clicks.body;
  const json listed = json::parse(clicks.body);
  int billed = 0;
  for (const json& c : listed.at("clicks")) billed += c.at("billed").get<bool>() ? 1 : 0;
  EXPECT_EQ(billed, 1) << clicks.body;

  // The stats add this release's impression to the earlier one's (counters flush each second).
  json stats;
  for (int i = 0; i < 100; ++i) {
    HttpResult r = client.Send("GET", "/admin/v1/campaigns/" + campaign + "/stats", admin);
    ASSERT_EQ(r.status, 200) << r.body;
    stats = json::parse(r.body);
    if (stats.value("impressions", 0) >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(stats.value("impressions", 0), 2) << stats.dump();
  EXPECT_EQ(stats.value("clicks", 0), 1) << stats.dump();

  // Inventory written by the earlier release can still be changed.
  HttpResult patch = client.Send("PATCH", "/admin/v1/campaigns/" + campaign,
                                 {{"Content-Type", "application/json"},
                                  {"Authorization", "Bearer " + options.admin_token}},
                                 R"({"name":"Swappers, upgraded"})");
  EXPECT_EQ(patch.status, 200) << patch.body;
  ASSERT_EQ(server.Stop(), 0) << server.Output();

  const std::string db = (data / "adserver.db").string();
  EXPECT_EQ(Query(db, "SELECT MAX(version) FROM schema_migrations"), std::to_string(latest));
  EXPECT_EQ(Query(db, "SELECT COUNT(*) FROM schema_migrations"), std::to_string(latest));
  EXPECT_EQ(Query(db, "PRAGMA integrity_check"), "ok");
}

TEST(UpgradeTest, EveryEarlierReleasesDataDirectoryOpensAndKeepsWorking) {
  std::vector<fs::path> fixtures = Fixtures();
  ASSERT_FALSE(fixtures.empty()) << "no fixture in " << ADSERVER_UPGRADE_FIXTURES;
  for (const fs::path& fixture : fixtures) {
    SCOPED_TRACE(fixture.filename().string());
    CheckUpgrade(fixture);
  }
}

}  // namespace
}  // namespace adserver::testing
