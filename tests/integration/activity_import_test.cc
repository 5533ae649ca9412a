// POST /admin/v1/activity on the real binary with every shape the bulk CLI import takes: a
// BigQuery token_transfers CSV, a gzip body, a column-mapped body; re-sent content (also
// content the CLI imported into the same data directory) is not counted twice.

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "integration/server_process.h"
#include "support/http_client.h"
#include "support/temp_dir.h"

namespace adserver::testing {
namespace {

using nlohmann::json;

constexpr char kUsdc[] = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48";
constexpr char kAlice[] = "0xa11ce00000000000000000000000000000000001";
constexpr char kBob[] = "0xb0b0000000000000000000000000000000000002";
constexpr char kCarol[] = "0xca201000000000000000000000000000000000c3";

std::string Gzip(const std::string& content) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, content.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(content.data()));
  z.avail_in = static_cast<uInt>(content.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

class ActivityImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start()) << server_.error();
    HttpResult p = client().Send("POST", "/admin/v1/projects", Headers("application/json"),
                                 json{{"slug", "usdc"},
                                      {"name", "USD Coin"},
                                      {"contracts", {{{"chainId", 1}, {"address", kUsdc}}}}}
                                     .dump());
    ASSERT_EQ(p.status, 201) << p.body;
  }

  // A minute: the large imports take seconds, many more under the sanitizers on a loaded
  // machine (8,000 projects passed the default 10 s there once); the timeout only bounds a hang.
  HttpClient client() { return HttpClient("127.0.0.1", server_.port(), std::chrono::seconds(60)); }
  HttpHeaders Headers(const std::string& type, const std::string& encoding = "") {
    HttpHeaders h = {{"Authorization", "Bearer " + server_.admin_token()}, {"Content-Type", type}};
    if (!encoding.empty()) h.emplace_back("Content-Encoding", encoding);
    return h;
  }
  json Post(const std::string& target, const std::string& body, const std::string& type,
            const std::string& encoding = "", int want = 200) {
    HttpResult r = client().Send("POST", target, Headers(type, encoding), body);
    EXPECT_EQ(r.status, want) << r.body;
    return json::parse(r.body, nullptr, false);
  }
  // (count, lastSeen) of the wallet's usdc activity; count 0 if none.
  std::pair<int64_t, std::string> Usdc(const std::string& wallet) {
    HttpResult r = client().Send("GET", "/admin/v1/activity/" + wallet,
                                 {{"Authorization", "Bearer " + server_.admin_token()}}, "");
    EXPECT_EQ(r.status, 200) << r.body;
    json body = json::parse(r.body);
    for (const json& i : body["interactions"]) {
      if (i["project"] == "usdc" && i["chainId"] == 1) {
        return {i["count"].get<int64_t>(), i["lastSeen"].get<std::string>()};
      }
    }
    ADD_FAILURE() << "no usdc activity: " << r.body;
    return {0, ""};
  }
  static std::string TokenTransfers(const std::string& from, const std::string& to,
                                    const std::string& day) {
    return "token_address,from_address,to_address,value,transaction_hash,log_index,"
           "block_timestamp,block_number,block_hash\n" +
           std::string(kUsdc) + "," + from + "," + to + ",1000000,0x01,0," + day +
           " 10:00:00 UTC,21525000,0x02\n" + "0x3333333333333333333333333333333333333333," + from +
           "," + to + ",1,0x03,1," + day + " 11:00:00 UTC,21525001,0x04\n";
  }

  ServerProcess server_;
};

TEST_F(ActivityImportTest, BigQueryCsvBodyIsImportedOnceAndReadBack) {
  std::string csv = TokenTransfers(kAlice, kBob, "2025-12-20");
  json first = Post("/admin/v1/activity", csv, "text/csv");
  EXPECT_EQ(first["shape"], "bigquery.token_transfers");
  EXPECT_EQ(first["rows"], 2);
  EXPECT_EQ(first["interactions"], 2);
  EXPECT_EQ(first["unknownContract"], 1);
  EXPECT_EQ(first["alreadyImported"], false);
  EXPECT_EQ(Usdc(kAlice), std::make_pair(int64_t{1}, std::string("2025-12-20T00:00:00Z")));
  EXPECT_EQ(Usdc(kBob).first, 1);

  json again = Post("/admin/v1/activity", csv, "text/csv");
  EXPECT_EQ(again["alreadyImported"], true);
  EXPECT_EQ(Usdc(kAlice).first, 1);
}

TEST_F(ActivityImportTest, GzipBodyByHeaderOrByMagic) {
  json r = Post("/admin/v1/activity", Gzip(TokenTransfers(kAlice, kCarol, "2025-12-21")),
                "text/csv", "gzip");
  EXPECT_EQ(r["interactions"], 2);
  json magic = Post("/admin/v1/activity", Gzip(TokenTransfers(kCarol, kBob, "2025-12-22")),
                    "application/gzip");
  EXPECT_EQ(magic["interactions"], 2);
  EXPECT_EQ(Usdc(kCarol), std::make_pair(int64_t{2}, std::string("2025-12-22T00:00:00Z")));
  json bad = Post("/admin/v1/activity", "not gzip", "text/csv", "gzip", 400);
  EXPECT_EQ(bad["details"][0]["field"], "body");
}

// adserver's own NDJSON, gzipped: imported with its strict rules while it is inflated, and the
// same content sent plain afterwards is already in the ledger.
TEST_F(ActivityImportTest, OwnNdjsonGzipBodyIsImportedAndKnownToTheLedger) {
  std::string nd =
      "{\"wallet\":\"" + std::string(kAlice) +
      "\",\"project\":\"usdc\",\"chainId\":1,\"timestamp\":\"2025-12-20T00:00:00Z\"}\n"
      "{\"wallet\":\"" +
      kBob + "\",\"project\":\"nope\",\"chainId\":1,\"timestamp\":\"2025-12-20T00:00:00Z\"}\n";
  json r = Post("/admin/v1/activity", Gzip(nd), "application/x-ndjson", "gzip");
  EXPECT_EQ(r["shape"], "adserver");
  EXPECT_EQ(r["imported"], 1) << r;
  EXPECT_EQ(r["rejected"], 1) << r;
  EXPECT_EQ(r["errors"][0]["line"], 2) << r;
  EXPECT_EQ(Usdc(kAlice).first, 1);
  json again = Post("/admin/v1/activity", nd, "application/x-ndjson");
  EXPECT_EQ(again["alreadyImported"], true) << again;
  json corrupt =
      Post("/admin/v1/activity", Gzip(nd).substr(0, 20), "application/x-ndjson", "", 400);
  EXPECT_EQ(corrupt["details"][0]["field"], "body") << corrupt;
}

TEST_F(ActivityImportTest, MappedColumnsFromTheQuery) {
  std::string csv = std::string("trader,pool,ts\n") + kBob + "," + kUsdc + ",1766188800\n";
  json r = Post("/admin/v1/activity?map=wallet%3Dtrader&map=contract=pool&map=time=ts&chain_id=1",
                csv, "text/csv");
  EXPECT_EQ(r["interactions"], 1);
  EXPECT_EQ(Usdc(kBob), std::make_pair(int64_t{1}, std::string("2025-12-20T00:00:00Z")));
  json bad = Post("/admin/v1/activity?map=wallet=nobody", csv, "text/csv", "", 400);
  EXPECT_EQ(bad["details"][0]["field"], "map");
}

TEST_F(ActivityImportTest, ContentTheCliImportedIsNotCountedAgain) {
  TempDir dir;
  std::string csv = TokenTransfers(kAlice, kBob, "2025-12-23");
  std::string path = dir.File("tt.csv");
  std::ofstream(path) << csv;
  std::string cmd = AdserverBinary() + " activity import --data " + server_.data_dir() + " " +
                    path + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(Usdc(kAlice).first, 1);
  json r = Post("/admin/v1/activity", Gzip(csv), "text/csv", "gzip");
  EXPECT_EQ(r["alreadyImported"], true);
  EXPECT_EQ(Usdc(kAlice).first, 1);
}

// --nice: "idle" (the default, SCHED_IDLE) or a nice value 0-19; anything else is refused
// before a row is read.
TEST_F(ActivityImportTest, TheCliImportRunsAtTheRequestedPriority) {
  TempDir dir;
  std::string path = dir.File("tt.csv");
  std::ofstream(path) << TokenTransfers(kCarol, kBob, "2025-12-24");
  std::string base = AdserverBinary() + " activity import --data " + server_.data_dir() + " " +
                     path + " --force";
  EXPECT_EQ(std::system((base + " --nice idle > /dev/null").c_str()), 0);
  EXPECT_EQ(std::system((base + " --nice 7 > /dev/null").c_str()), 0);
  std::string errors = dir.File("errors.txt");
  EXPECT_NE(std::system((base + " --nice 20 > /dev/null 2> " + errors).c_str()), 0);
  EXPECT_NE(std::system((base + " --nice low > /dev/null 2>> " + errors).c_str()), 0);
  std::stringstream text;
  text << std::ifstream(errors).rdbuf();
  EXPECT_NE(text.str().find("--nice: must be idle or an integer 0-19, got '20'"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("got 'low'"), std::string::npos) << text.str();
}

// Anonymous resident memory (RssAnon) of `pid`, KiB: the heap, not the page cache.
int64_t RssAnonKib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("RssAnon:")) return std::stoll(line.substr(8));
  }
  return -1;
}

// A BigQuery token_transfers CSV of about `bytes`: one USDC transfer in every 100 rows (from a
// wallet of its own), the rest with a contract the registry does not know.
std::string LargeTokenTransfers(size_t bytes, int* usdc_rows) {
  std::string csv =
      "token_address,from_address,to_address,value,transaction_hash,log_index,"
      "block_timestamp,block_number,block_hash\n";
  char wallet[43];
  *usdc_rows = 0;
  for (int i = 0; csv.size() < bytes; ++i) {
    std::snprintf(wallet, sizeof(wallet), "0x%040x", 0x1000000 + i);
    bool usdc = i % 100 == 0;
    *usdc_rows += usdc ? 1 : 0;
    csv += usdc ? kUsdc : "0x3333333333333333333333333333333333333333";
    csv += ",";
    csv += wallet;
    csv += ",0x0000000000000000000000000000000000000001,1,0x01,0,2025-12-20 10:00:00 UTC,1,0x02\n";
  }
  return csv;
}

std::set<std::string> Entries(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.insert(e.path().filename().string());
  }
  return names;
}

// The most the server's heap grew (KiB) while it took and imported `csv`, and the answer.
std::pair<int64_t, json> PeakHeapGrowthOfImport(ServerProcess& server, const std::string& csv) {
  int64_t base = RssAnonKib(server.pid());
  std::atomic<int64_t> peak = base;
  std::atomic<bool> done = false;
  std::thread sampler([&] {
    while (!done.load()) {
      peak = std::max<int64_t>(peak.load(), RssAnonKib(server.pid()));
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  HttpResult r =
      HttpClient("127.0.0.1", server.port(), std::chrono::seconds(60))
          .Send("POST", "/admin/v1/activity",
                {{"Authorization", "Bearer " + server.admin_token()}, {"Content-Type", "text/csv"}},
                csv);
  done = true;
  sampler.join();
  EXPECT_EQ(r.status, 200) << r.body.substr(0, 500);
  return {peak.load() - base, json::parse(r.body, nullptr, false)};
}

// Issue 39: a bulk body past admin.max_body_bytes (1 MiB) is written to an unlinked file in the
// data directory as it arrives and imported from its memory map; the heap does not hold it. The
// same upload with spooling out of reach (admin.max_body_bytes above the body) is the control
// that shows the measurement sees a body held in memory.
TEST_F(ActivityImportTest, ABulkBodyPastTheAdminLimitIsStreamedNotHeld) {
  int usdc_rows = 0;
  const std::string csv = LargeTokenTransfers(48u << 20, &usdc_rows);
  std::set<std::string> before = Entries(server_.data_dir());
  auto [growth, r] = PeakHeapGrowthOfImport(server_, csv);
  EXPECT_EQ(r["interactions"].get<int64_t>(), 2 * usdc_rows) << r;
  EXPECT_EQ(r["unknownContract"], r["rows"].get<int64_t>() - usdc_rows) << r;
  EXPECT_EQ(Usdc("0x" + std::string(33, '0') + "1000000").first, 1);
  EXPECT_LT(growth, 16 * 1024) << "heap grew by " << growth << " KiB for a 48 MiB body";
  before.insert("imports.ledger");  // the import remembers the content
  EXPECT_EQ(Entries(server_.data_dir()), before) << "the spooled body left a file behind";
  std::cout << "peak heap growth for a " << csv.size() / 1024 << " KiB body: streamed " << growth
            << " KiB, ";

  TempDir dir;
  std::string config = dir.File("adserver.toml");
  std::ofstream(config) << "[admin]\nmax_body_bytes = " << (64u << 20) << "\n";
  ServerProcess::Options options;
  options.extra_args = {"--config", config};
  ServerProcess held(options);
  ASSERT_TRUE(held.Start()) << held.error();
  auto [held_growth, held_r] = PeakHeapGrowthOfImport(held, csv);
  EXPECT_EQ(held_r["rows"], r["rows"]);
  std::cout << "held in memory " << held_growth << " KiB\n";
  EXPECT_GT(held_growth, 40 * 1024) << "the control did not see the body in the heap";
}

// The registry import is the other bulk route: a token list past the 1 MiB admin limit is
// spooled the same way and imported whole.
TEST_F(ActivityImportTest, AProjectListPastTheAdminLimitIsImportedWhole) {
  json tokens = json::array();
  char address[43];
  for (int i = 0; i < 8'000; ++i) {
    std::snprintf(address, sizeof(address), "0x%040x", 0x2000000 + i);
    tokens.push_back({{"chainId", 1},
                      {"address", address},
                      {"name", "Spooled Token Number " + std::to_string(i)},
                      {"symbol", "SPL" + std::to_string(i)},
                      {"decimals", 18}});
  }
  std::string body = json{{"name", "A large list"}, {"tokens", tokens}}.dump();
  ASSERT_GT(body.size(), 1u << 20);
  json r = Post("/admin/v1/projects/import", body, "application/json");
  EXPECT_EQ(r["entries"], 8'000) << r;
  EXPECT_EQ(r["added"], 8'000) << r;
}

}  // namespace
}  // namespace adserver::testing
