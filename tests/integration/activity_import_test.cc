// POST /admin/v1/activity on the real binary with every shape the bulk CLI import takes: a
// BigQuery token_transfers CSV, a gzip body, a column-mapped body; re-sent content (also
// content the CLI imported into the same data directory) is not counted twice.

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>

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

  HttpClient client() { return HttpClient("127.0.0.1", server_.port()); }
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

}  // namespace
}  // namespace adserver::testing
