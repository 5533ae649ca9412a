// Backup and restore (issue 19 item 6) over the real binary: `adserver backup` copies a data
// directory while the server keeps serving ads and accepting admin writes and activity
// imports; `adserver restore` puts the copy into an empty directory; a server started on it has
// every write acknowledged before the backup began, and its stores pass their checks.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "integration/fixture.h"
#include "support/temp_dir.h"

namespace adserver::testing {
namespace {

using nlohmann::json;

std::string Wallet(int n) {
  char buffer[43];
  std::snprintf(buffer, sizeof buffer, "0x%040x", 0xbac0000 + n);
  return buffer;
}

// Imports `count` fresh wallets (from `first`) with USDC activity; true when acknowledged.
bool ImportWallets(ServingFixture& f, int first, int count) {
  std::string ndjson;
  for (int i = first; i < first + count; ++i) {
    ndjson += json({{"wallet", Wallet(i)},
                    {"project", "usdc"},
                    {"chainId", 1},
                    {"timestamp", "2026-11-20T10:00:00Z"}})
                  .dump() +
              "\n";
  }
  HttpResult r = f.Client().Send("POST", "/admin/v1/activity",
                                 {{"Content-Type", "application/x-ndjson"},
                                  {"Authorization", "Bearer " + f.server().admin_token()}},
                                 ndjson);
  return r.status == 200;
}

TEST(BackupTest, ABackupTakenUnderLoadRestoresEveryAcknowledgedWrite) {
  ServingFixture f;
  ASSERT_TRUE(f.ok()) << f.error();
  // Acknowledged before the backup.
  std::vector<int64_t> communities;
  for (int i = 0; i < 20; ++i) {
    HttpResult r = f.Admin("POST", "/admin/v1/communities",
                           {{"name", "Before " + std::to_string(i)},
                            {"logoUrl", "https://c.example/l.png"}});
    ASSERT_EQ(r.status, 201) << r.body;
    communities.push_back(json::parse(r.body)["id"].get<int64_t>());
  }
  ASSERT_TRUE(ImportWallets(f, 0, 50));

  // Load while the backup runs: ads, admin writes, imports.
  std::atomic<bool> stop{false};
  std::atomic<int> writes{0};
  std::thread load([&] {
    int n = 0;
    while (!stop.load()) {
      f.Admin("POST", "/admin/v1/communities",
              {{"name", "During " + std::to_string(n)}, {"logoUrl", "https://c.example/l.png"}});
      ImportWallets(f, 1000 + 10 * n, 10);
      json body = {{"walletAddresses", {Wallet(1)}}, {"imageFormat", "LANDSCAPE"}};
      f.Client().Send("POST", "/v1/ads",
                      {{"Content-Type", "application/json"}, {"x-api-key", f.keys.open_live}},
                      body.dump());
      writes.fetch_add(1);
      ++n;
    }
  });
  while (writes.load() < 5) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  TempDir dir;
  const std::string backup = dir.File("backup");
  std::string cmd = AdserverBinary() + " backup --data " + f.server().data_dir() + " --to " +
                    backup + " > " + dir.File("backup.out") + " 2>&1";
  int rc = std::system(cmd.c_str());
  const int during = writes.load();
  stop = true;
  load.join();
  ASSERT_EQ(rc, 0) << cmd;
  EXPECT_GT(writes.load(), during - 1);  // the server kept answering meanwhile

  // A second backup into the same place is refused; restore into a non-empty directory too.
  EXPECT_NE(std::system((AdserverBinary() + " backup --data " + f.server().data_dir() +
                         " --to " + backup + " > /dev/null 2>&1")
                            .c_str()),
            0);
  EXPECT_NE(std::system((AdserverBinary() + " restore --from " + backup + " --data " +
                         f.server().data_dir() + " > /dev/null 2>&1")
                            .c_str()),
            0);

  const std::string restored = dir.File("restored");
  ASSERT_EQ(std::system((AdserverBinary() + " restore --from " + backup + " --data " + restored +
                         " > /dev/null")
                            .c_str()),
            0);
  ServerProcess::Options options;
  options.data_dir = restored;
  ServerProcess server(options);
  ASSERT_TRUE(server.Start(std::chrono::seconds(60))) << server.error();
  HttpClient client("127.0.0.1", server.port());
  const HttpHeaders auth = {{"Authorization", "Bearer " + server.admin_token()}};
  for (int64_t id : communities) {
    HttpResult r = client.Get("/admin/v1/communities/" + std::to_string(id), auth);
    EXPECT_EQ(r.status, 200) << id << ": " << r.body;
  }
  for (int i = 0; i < 50; ++i) {
    HttpResult r = client.Get("/admin/v1/activity/" + Wallet(i), auth);
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_NE(r.body.find("usdc"), std::string::npos) << Wallet(i) << ": " << r.body;
  }
  // The restored server serves ads with the fixture's keys.
  json body = {{"walletAddresses", {Wallet(1)}}, {"imageFormat", "LANDSCAPE"}};
  HttpResult ad = client.Send(
      "POST", "/v1/ads", {{"Content-Type", "application/json"}, {"x-api-key", f.keys.open_live}},
      body.dump());
  EXPECT_TRUE(ad.status == 200 || ad.status == 204) << ad.status << " " << ad.body;
  EXPECT_EQ(server.Stop(), 0);
}

TEST(BackupTest, RestoreRefusesWhatIsNotABackup) {
  TempDir dir;
  EXPECT_NE(std::system((AdserverBinary() + " restore --from " + dir.path().string() + " --data " +
                         dir.File("new") + " > /dev/null 2>&1")
                            .c_str()),
            0);
}

}  // namespace
}  // namespace adserver::testing
