// Events over real HTTP (issue 15): the click URL of live keys on both variants, the 302 with
// spclid, CPC billing of the first valid click, duplicates, HEAD, forged and expired tokens,
// test keys writing nothing, the read-back API, and no answered click lost to kill -9.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "integration/fixture.h"
#include "support/temp_dir.h"

namespace adserver::testing {
namespace {

using nlohmann::json;

constexpr char kPublicUrl[] = "https://clicks.example.test";
constexpr int kClickTtlSeconds = 3;

struct Env {
  TempDir config_dir;
  std::unique_ptr<ServingFixture> fixture;
  int64_t cpc_campaign = 0;
  int64_t cpc_ad = 0;
};
Env* env = nullptr;

class EventsEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    env = new Env();
    std::string config = env->config_dir.File("adserver.toml");
    std::ofstream(config) << "[events]\nclick_ttl_seconds = " << kClickTtlSeconds
                          << "\nflush_interval_ms = 200\n"
                          << kTrafficChecksOff
                          // The CPC campaign must win every serve: the greedy rule (exploration
                          // is tested in decision_test).
                          << "[decision]\nexplore = false\n";
    ServerProcess::Options options;
    options.env["ADSERVER_PUBLIC_URL"] = kPublicUrl;
    options.extra_args = {"--config", config};
    env->fixture = std::make_unique<ServingFixture>(options);
    ASSERT_TRUE(env->fixture->ok()) << env->fixture->error();
    // A CPC campaign for the Base USDC wallet, worth more than the CPM campaign there.
    HttpResult community =
        env->fixture->Admin("POST", "/admin/v1/communities",
                            {{"name", "Clicky"}, {"logoUrl", "https://c.example/l.png"}});
    ASSERT_EQ(community.status, 201) << community.body;
    HttpResult campaign =
        env->fixture->Admin("POST", "/admin/v1/campaigns",
                            {{"communityId", json::parse(community.body)["id"]},
                             {"name", "Pay per click"},
                             {"status", "active"},
                             {"pricing", {{"model", "CPC"}, {"bid", 5}}},
                             {"targeting", {{"projects", {"usdc"}}, {"chains", {8453}}}}});
    ASSERT_EQ(campaign.status, 201) << campaign.body;
    env->cpc_campaign = json::parse(campaign.body)["id"].get<int64_t>();
    HttpResult ad =
        env->fixture->Admin("POST", "/admin/v1/ads",
                            {{"campaignId", env->cpc_campaign},
                             {"headline", "Click me"},
                             {"content", "A **CPC** ad."},
                             {"ctaUrl", "https://cpc.example/landing?ref=x&q=a%20b#top"},
                             {"ctaLabel", "Go"},
                             {"images",
                              {{"LANDSCAPE", "https://c.example/a.png"},
                               {"SHORT_BANNER", "https://c.example/s.png"}}}});
    ASSERT_EQ(ad.status, 201) << ad.body;
    env->cpc_ad = json::parse(ad.body)["id"].get<int64_t>();
    // The catalog is rebuilt from the store within a poll interval.
    for (int i = 0; i < 200; ++i) {
      HttpResult r = Serve("/v1/ads", env->fixture->keys.open_live);
      if (r.status == 200 && json::parse(r.body).value("adId", "") == std::to_string(env->cpc_ad)) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));  // waiting for the rebuild
    }
    FAIL() << "the CPC campaign was never served";
  }
  void TearDown() override {
    delete env;
    env = nullptr;
  }

  static HttpResult Serve(const std::string& path, const std::string& key,
                          const std::string& wallet = "0x4444444444444444444444444444444444444444",
                          const std::string& ad_unit = "") {
    json body = {{"walletAddresses", {wallet}}, {"imageFormat", "LANDSCAPE"}};
    if (!ad_unit.empty()) body["adUnitId"] = ad_unit;
    return env->fixture->Client().Send(
        "POST", path, {{"Content-Type", "application/json"}, {"x-api-key", key}}, body.dump());
  }
};
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new EventsEnvironment);

HttpResult Serve(const std::string& path = "/v1/ads", const std::string& ad_unit = "") {
  return EventsEnvironment::Serve(path, env->fixture->keys.open_live,
                                  "0x4444444444444444444444444444444444444444", ad_unit);
}

// The click path of an ad answer ("/v1/click/..."), checking it is on the public URL.
std::string ClickPath(const HttpResult& r) {
  EXPECT_EQ(r.status, 200) << r.body;
  std::string url = json::parse(r.body).value("ctaUrl", "");
  std::string prefix = std::string(kPublicUrl) + "/v1/click/";
  EXPECT_TRUE(url.starts_with(prefix)) << url;
  return url.substr(std::string(kPublicUrl).size());
}

HttpResult Click(const std::string& path, const std::string& method = "GET") {
  return env->fixture->Client().Send(method, path);
}

// Waits past two flush intervals, so that earlier serves are in the stats.
json Stats() {
  HttpResult r = env->fixture->Admin(
      "GET", "/admin/v1/campaigns/" + std::to_string(env->cpc_campaign) + "/stats");
  EXPECT_EQ(r.status, 200) << r.body;
  return json::parse(r.body);
}

// Waits until the earlier tests' impressions have reached the stats: two reads 600 ms apart
// (more than a flush interval) agree, for at most 15 s (a loaded sanitizer run flushes late;
// a fixed sleep once read the stats while three impressions were still buffered).
void SettleFlush() {
  int64_t last = Stats()["impressions"].get<int64_t>();
  for (int i = 0; i < 25; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    const int64_t now = Stats()["impressions"].get<int64_t>();
    if (now == last) return;
    last = now;
  }
}

// The stats once `ready` holds for them (clicks reach them with the next flush), or the last
// ones read after 5 s.
json StatsWhen(const std::function<bool(const json&)>& ready) {
  json stats = Stats();
  for (int i = 0; i < 200 && !ready(stats); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    stats = Stats();
  }
  return stats;
}

json Clicks(const std::string& query = "") {
  HttpResult r = env->fixture->Admin(
      "GET", "/admin/v1/clicks?campaignId=" + std::to_string(env->cpc_campaign) + query);
  EXPECT_EQ(r.status, 200) << r.body;
  return json::parse(r.body);
}

std::string Rfc3339Now() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

std::string SpclidOf(const std::string& location) {
  size_t at = location.find("spclid=");
  return at == std::string::npos ? "" : location.substr(at + 7, 36);
}

TEST(EventsTest, AClickRedirectsWithSpclidAndBillsTheCpcBidOnce) {
  SettleFlush();
  json before = Stats();
  std::string path = ClickPath(Serve("/v1/ads", "sidebar"));
  HttpResult first = Click(path);
  ASSERT_EQ(first.status, 302) << first.body;
  std::string location = first.Header("Location");
  std::string spclid = SpclidOf(location);
  ASSERT_EQ(spclid.size(), 36u) << location;
  EXPECT_EQ(location, "https://cpc.example/landing?ref=x&q=a%20b&spclid=" + spclid + "#top");
  EXPECT_EQ(first.Header("Cache-Control"), "no-store");
  EXPECT_EQ(first.Header("Referrer-Policy"), "no-referrer");

  // The click is durable before the 302: it is listed at once.
  json listed = Clicks();
  ASSERT_FALSE(listed["clicks"].empty());
  json row = listed["clicks"][0];
  EXPECT_EQ(row["decisionId"], spclid);
  EXPECT_EQ(row["status"], "billed");
  EXPECT_EQ(row["billed"], true);
  EXPECT_EQ(row["price"], 5);
  EXPECT_EQ(row["adUnitId"], "sidebar");
  EXPECT_EQ(row["variant"], "current");
  EXPECT_EQ(row["adId"], std::to_string(env->cpc_ad));
  EXPECT_EQ(row["publisherId"], std::to_string(env->fixture->keys.open_publisher));
  EXPECT_EQ(row["person"].get<std::string>().size(), 16u);
  EXPECT_EQ(row.dump().find("0x4444"), std::string::npos) << "no raw wallet in a click row";

  // Repeats redirect the same way and are recorded as duplicates, not billed.
  HttpResult again = Click(path);
  ASSERT_EQ(again.status, 302);
  EXPECT_EQ(again.Header("Location"), location);
  json after = StatsWhen([&](const json& s) {
    return s["clicksByStatus"]["duplicate"].get<int>() >
           before["clicksByStatus"]["duplicate"].get<int>();
  });
  EXPECT_EQ(after["clicks"].get<int>(), before["clicks"].get<int>() + 1);
  EXPECT_EQ(after["clicksByStatus"]["duplicate"].get<int>(),
            before["clicksByStatus"]["duplicate"].get<int>() + 1);
  EXPECT_DOUBLE_EQ(after["spendBreakdown"]["clicks"].get<double>(),
                   before["spendBreakdown"]["clicks"].get<double>() + 5);
  EXPECT_EQ(Clicks()["clicks"][0]["status"], "duplicate");
}

TEST(EventsTest, ServedImpressionsReachTheStatsWithinAFlush) {
  SettleFlush();
  int64_t before = Stats()["impressions"].get<int64_t>();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Serve().status, 200);
  int64_t now = before;
  for (int i = 0; i < 200 && now < before + 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));  // waiting for the flush
    now = Stats()["impressions"].get<int64_t>();
  }
  EXPECT_EQ(now, before + 3);
  json stats = Stats();
  EXPECT_GT(stats["ctr"].get<double>(), 0);
  EXPECT_EQ(stats["conversions"], 0);
}

TEST(EventsTest, TheEarlierVariantLinksThroughTheClickRedirectToo) {
  std::string path = ClickPath(Serve("/api/ads"));
  HttpResult click = Click(path);
  ASSERT_EQ(click.status, 302);
  json row = Clicks()["clicks"][0];
  EXPECT_EQ(row["variant"], "earlier");
  EXPECT_EQ(row["status"], "billed");
  EXPECT_EQ(row["decisionId"], SpclidOf(click.Header("Location")));
}

TEST(EventsTest, HeadRedirectsButIsNotAClick) {
  std::string path = ClickPath(Serve());
  size_t rows = Clicks("&limit=1000")["clicks"].size();
  HttpResult head = Click(path, "HEAD");
  EXPECT_EQ(head.status, 302);
  EXPECT_TRUE(head.Header("Location").starts_with("https://cpc.example/landing?"));
  EXPECT_EQ(Clicks("&limit=1000")["clicks"].size(), rows);
}

TEST(EventsTest, ForgedTruncatedOrTamperedTokensGet400AndNoRedirect) {
  std::string path = ClickPath(Serve());
  std::string tampered = path;
  tampered[tampered.size() - 5] = tampered[tampered.size() - 5] == 'A' ? 'B' : 'A';
  for (const std::string& bad : {tampered, path.substr(0, path.size() - 10),
                                 std::string("/v1/click/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
                                 std::string("/v1/click/%00%01"), path + "x"}) {
    HttpResult r = Click(bad);
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_FALSE(r.HasHeader("Location")) << bad;
    json body = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(body.is_object()) << r.body;
    EXPECT_EQ(body["error"], "Invalid click token");
    EXPECT_EQ(body["details"][0]["field"], "token");
  }
}

TEST(EventsTest, TestKeysLinkToTheAdAndWriteNothing) {
  SettleFlush();
  json before = Stats();
  HttpResult r = EventsEnvironment::Serve("/v1/ads", env->fixture->keys.open_test);
  ASSERT_EQ(r.status, 200);
  std::string url = json::parse(r.body).value("ctaUrl", "");
  EXPECT_FALSE(url.starts_with(kPublicUrl)) << url;
  // A live serve after it: once its impression is in the stats, a flush after the test key's
  // serve has run (impressions are flushed in order), and only the live one may have counted.
  ASSERT_EQ(Serve().status, 200);
  json after = StatsWhen([&](const json& s) {
    return s["impressions"].get<int64_t>() > before["impressions"].get<int64_t>();
  });
  EXPECT_EQ(after["impressions"].get<int64_t>(), before["impressions"].get<int64_t>() + 1);
}

TEST(EventsTest, AnExpiredTokenRedirectsButIsNotBilled) {
  std::string path = ClickPath(Serve());
  std::this_thread::sleep_for(std::chrono::seconds(kClickTtlSeconds + 2));  // past the TTL
  json before = Stats();  // every earlier click is rolled up by now
  HttpResult r = Click(path);
  ASSERT_EQ(r.status, 302);
  EXPECT_TRUE(r.Header("Location").starts_with("https://cpc.example/"));
  json row = Clicks()["clicks"][0];
  EXPECT_EQ(row["status"], "expired");
  EXPECT_EQ(row["billed"], false);
  EXPECT_EQ(row["price"], 0);
  json after = StatsWhen([&](const json& s) {
    return s["clicksByStatus"]["expired"].get<int>() >
           before["clicksByStatus"]["expired"].get<int>();
  });
  EXPECT_EQ(after["clicks"], before["clicks"]);
  EXPECT_EQ(after["clicksByStatus"]["expired"].get<int>(),
            before["clicksByStatus"]["expired"].get<int>() + 1);
}

TEST(EventsTest, ListingsFilterPageAndRejectBadParameters) {
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Click(ClickPath(Serve())).status, 302);
  json page = Clicks("&limit=2");
  ASSERT_EQ(page["clicks"].size(), 2u);
  ASSERT_TRUE(page["nextCursor"].is_string());
  json next = Clicks("&limit=2&cursor=" + page["nextCursor"].get<std::string>());
  ASSERT_FALSE(next["clicks"].empty());
  EXPECT_LT(std::stoll(next["clicks"][0]["id"].get<std::string>()),
            std::stoll(page["clicks"][1]["id"].get<std::string>()));
  EXPECT_TRUE(Clicks("&from=2999-01-01")["clicks"].empty());
  EXPECT_FALSE(Clicks("&to=2999-01-01T00:00:00Z")["clicks"].empty());
  HttpResult other = env->fixture->Admin("GET", "/admin/v1/clicks?publisherId=999999");
  EXPECT_TRUE(json::parse(other.body)["clicks"].empty());
  HttpResult bad = env->fixture->Admin("GET", "/admin/v1/clicks?limit=0&from=yesterday&x=1");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(json::parse(bad.body)["details"].size(), 3u) << bad.body;
  EXPECT_EQ(env->fixture->Admin("GET", "/admin/v1/campaigns/999999/stats").status, 404);
  HttpResult anonymous = env->fixture->Client().Get("/admin/v1/clicks");
  EXPECT_EQ(anonymous.status, 401);
}

// Runs last: it kills the server.
// Issue 15: "a bulk import loads rows that carry a tx hash" converts like a block does.
TEST(EventsTest, AnImportedTransactionOfAnExposedWalletIsAConversion) {
  const std::string wallet = "0x8888888888888888888888888888888888888888";
  const std::string contract = "0x9999999999999999999999999999999999999999";
  ServingFixture& f = *env->fixture;
  HttpResult project = f.Admin("POST", "/admin/v1/projects",
                               {{"slug", "swapper"},
                                {"name", "Swapper"},
                                {"contracts", {{{"chainId", 1}, {"address", contract}}}}});
  ASSERT_EQ(project.status, 201) << project.body;
  auto ndjson = [&](const std::string& extra) {
    return "{\"wallet\":\"" + wallet + "\",\"project\":\"swapper\",\"chainId\":1," +
           "\"timestamp\":\"" + Rfc3339Now() + "\"" + extra + "}\n";
  };
  HttpResult history = f.Client().Send("POST", "/admin/v1/activity",
                                       {{"Content-Type", "application/x-ndjson"},
                                        {"Authorization", "Bearer " + f.server().admin_token()}},
                                       ndjson(""));
  ASSERT_EQ(history.status, 200) << history.body;
  HttpResult community = f.Admin("POST", "/admin/v1/communities",
                                 {{"name", "Swapper DAO"}, {"logoUrl", "https://s.example/l.png"}});
  ASSERT_EQ(community.status, 201) << community.body;
  // Conversions count only on a project verified as the community's own (issue 39).
  HttpResult owned = f.Admin("PATCH", "/admin/v1/projects/swapper",
                             {{"ownerCommunityId", json::parse(community.body)["id"]}});
  ASSERT_EQ(owned.status, 200) << owned.body;
  HttpResult campaign = f.Admin("POST", "/admin/v1/campaigns",
                                {{"communityId", json::parse(community.body)["id"]},
                                 {"name", "Pay per swap"},
                                 {"status", "active"},
                                 {"pricing", {{"model", "CPA"}, {"bid", 3}}},
                                 {"conversion", {{"projects", {"swapper"}}}},
                                 {"targeting", {{"projects", {"swapper"}}}}});
  ASSERT_EQ(campaign.status, 201) << campaign.body;
  int64_t campaign_id = json::parse(campaign.body)["id"].get<int64_t>();
  HttpResult ad = f.Admin("POST", "/admin/v1/ads",
                          {{"campaignId", campaign_id},
                           {"headline", "Swap"},
                           {"content", "Swap now."},
                           {"ctaUrl", "https://swapper.example/"},
                           {"ctaLabel", "Swap"},
                           {"images", {{"LANDSCAPE", "https://s.example/a.png"}}}});
  ASSERT_EQ(ad.status, 201) << ad.body;
  std::string ad_id = std::to_string(json::parse(ad.body)["id"].get<int64_t>());
  bool served = false;
  for (int i = 0; i < 200 && !served; ++i) {
    HttpResult r = EventsEnvironment::Serve("/v1/ads", f.keys.open_live, wallet);
    served = r.status == 200 && json::parse(r.body).value("adId", "") == ad_id;
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_TRUE(served) << "the CPA campaign was never served to " << wallet;

  // The wallet's swap, from an export that names the transaction, a second later: export
  // timestamps have whole seconds, and an interaction stamped before the serve never counts.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  std::string tx = "0x" + std::string(62, 'd') + "01";
  HttpResult swap = f.Client().Send("POST", "/admin/v1/activity",
                                    {{"Content-Type", "application/x-ndjson"},
                                     {"Authorization", "Bearer " + f.server().admin_token()}},
                                    ndjson(",\"txHash\":\"" + tx + "\",\"blockNumber\":123"));
  ASSERT_EQ(swap.status, 200) << swap.body;
  HttpResult listed =
      f.Admin("GET", "/admin/v1/conversions?campaignId=" + std::to_string(campaign_id));
  ASSERT_EQ(listed.status, 200) << listed.body;
  json rows = json::parse(listed.body)["conversions"];
  ASSERT_EQ(rows.size(), 1u) << listed.body;
  EXPECT_EQ(rows[0]["txHash"], tx);
  EXPECT_EQ(rows[0]["touch"], "view");
  EXPECT_EQ(rows[0]["blockNumber"], 123);
  EXPECT_EQ(rows[0]["adId"], ad_id);
  EXPECT_EQ(rows[0]["wallet"], wallet);
  // Issue 39: the advertiser sees the transaction and the person digest, never the wallet.
  HttpResult user = f.Admin("POST", "/admin/v1/users",
                            {{"email", "swapper@example.test"},
                             {"password", "swapper-password-1"},
                             {"role", "advertiser"},
                             {"communityId", json::parse(community.body)["id"]}});
  ASSERT_EQ(user.status, 201) << user.body;
  HttpResult token =
      f.Admin("POST", "/admin/v1/tokens", {{"userId", json::parse(user.body)["id"]}});
  ASSERT_EQ(token.status, 201) << token.body;
  HttpResult own = f.Client().Send(
      "GET", "/admin/v1/conversions",
      {{"Authorization", "Bearer " + json::parse(token.body)["token"].get<std::string>()}}, "");
  ASSERT_EQ(own.status, 200) << own.body;
  json own_rows = json::parse(own.body)["conversions"];
  ASSERT_EQ(own_rows.size(), 1u) << own.body;
  EXPECT_TRUE(own_rows[0]["wallet"].is_null()) << own.body;
  EXPECT_EQ(own_rows[0]["txHash"], tx);
  EXPECT_EQ(own_rows[0]["person"], rows[0]["person"]);
  EXPECT_TRUE(own_rows[0]["price"].is_number() && own_rows[0]["earnings"].is_null()) << own.body;
  // The same transaction in another upload counts once.
  HttpResult again = f.Client().Send(
      "POST", "/admin/v1/activity",
      {{"Content-Type", "application/x-ndjson"},
       {"Authorization", "Bearer " + f.server().admin_token()}},
      ndjson(",\"txHash\":\"" + tx + "\",\"blockNumber\":123,\"logIndex\":0") + "\n");
  ASSERT_EQ(again.status, 200) << again.body;
  listed = f.Admin("GET", "/admin/v1/conversions?campaignId=" + std::to_string(campaign_id));
  // logIndex 0 is another interaction key (a log, not the transaction): the once-per-person
  // rule keeps it from counting again.
  EXPECT_EQ(json::parse(listed.body)["conversions"].size(), 1u) << listed.body;

  // The CLI's import, another process on the same data directory while the server runs,
  // attributes too: another exposed wallet's swap.
  const std::string second = "0x7777777777777777777777777777777777777777";
  HttpResult targeted = f.Client().Send(
      "POST", "/admin/v1/activity",
      {{"Content-Type", "application/x-ndjson"},
       {"Authorization", "Bearer " + f.server().admin_token()}},
      "{\"wallet\":\"" + second + "\",\"project\":\"swapper\",\"chainId\":1," +
          "\"timestamp\":\"" + Rfc3339Now() + "\"}\n");
  ASSERT_EQ(targeted.status, 200) << targeted.body;
  ASSERT_EQ(json::parse(targeted.body)["imported"], 1) << targeted.body;
  served = false;
  for (int i = 0; i < 200 && !served; ++i) {
    HttpResult r = EventsEnvironment::Serve("/v1/ads", f.keys.open_live, second);
    served = r.status == 200 && json::parse(r.body).value("adId", "") == ad_id;
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_TRUE(served) << "the CPA campaign was never served to " << second;
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // exposures reach LMDB
  TempDir dir;
  std::string file = dir.File("swaps.ndjson");
  std::string tx2 = "0x" + std::string(62, 'e') + "02";
  std::ofstream(file) << "{\"wallet\":\"" + second +
                             "\",\"project\":\"swapper\",\"chainId\":1,\"timestamp\":\"" +
                             Rfc3339Now() + "\",\"txHash\":\"" + tx2 +
                             "\",\"blockNumber\":124}\n";
  std::string out = dir.File("out.json");
  std::string cmd = AdserverBinary() + " activity import --data " + f.server().data_dir() + " " +
                    file + " > " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream summary_file(out);
  json summary = json::parse(summary_file);
  EXPECT_EQ(summary["transactions"], 1) << summary.dump();
  EXPECT_EQ(summary["conversions"], 1) << summary.dump();
  listed = f.Admin("GET", "/admin/v1/conversions?campaignId=" + std::to_string(campaign_id));
  rows = json::parse(listed.body)["conversions"];
  ASSERT_EQ(rows.size(), 2u) << listed.body;
  EXPECT_EQ(rows[0]["txHash"], tx2);

  // Issue 37, through the CLI's path: with the campaign paused and 6 of its 7 budget spent, a
  // third swap inside the window is still attributed, and recorded over_budget (3 > 1 left):
  // listed and counted, never billed (the running server, following it, bills nothing).
  HttpResult paused =
      f.Admin("PATCH", "/admin/v1/campaigns/" + std::to_string(campaign_id),
              {{"status", "paused"},
               {"budget", {{"total", 7}}},
               {"conversion", {{"projects", {"swapper"}}, {"countOncePerPerson", false}}}});
  ASSERT_EQ(paused.status, 200) << paused.body;
  std::string tx3 = "0x" + std::string(62, 'f') + "03";
  std::ofstream(file) << "{\"wallet\":\"" + second +
                             "\",\"project\":\"swapper\",\"chainId\":1,\"timestamp\":\"" +
                             Rfc3339Now() + "\",\"txHash\":\"" + tx3 + "\",\"blockNumber\":125}\n";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  listed = f.Admin("GET", "/admin/v1/conversions?campaignId=" + std::to_string(campaign_id));
  rows = json::parse(listed.body)["conversions"];
  ASSERT_EQ(rows.size(), 3u) << listed.body;
  EXPECT_EQ(rows[0]["txHash"], tx3);
  EXPECT_EQ(rows[0]["status"], "over_budget") << listed.body;
  EXPECT_EQ(rows[0]["billed"], false);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the server follows it
  HttpResult stats =
      f.Admin("GET", "/admin/v1/campaigns/" + std::to_string(campaign_id) + "/stats");
  ASSERT_EQ(stats.status, 200) << stats.body;
  json s = json::parse(stats.body);
  EXPECT_EQ(s["conversions"], 2) << stats.body;
  EXPECT_EQ(s["overBudgetConversions"], 1) << stats.body;
  EXPECT_EQ(s["spend"], 6) << stats.body;
  // The server's own budget counters did not take it either.
  HttpResult metrics = f.Admin("GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("adserver_conversions_total{status=\"billed\"} 2"), std::string::npos)
      << metrics.body.substr(0, 3000);
  // A campaign deleted with billed history keeps its conversions, listed as before.
  HttpResult deleted = f.Admin("DELETE", "/admin/v1/campaigns/" + std::to_string(campaign_id));
  ASSERT_TRUE(deleted.status == 200 || deleted.status == 204) << deleted.body;
  listed = f.Admin("GET", "/admin/v1/conversions?campaignId=" + std::to_string(campaign_id));
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(json::parse(listed.body)["conversions"].size(), 3u) << listed.body;
}

TEST(EventsTest, ZZ_KillNineAfterA302LosesNoClick) {
  std::string path = ClickPath(Serve());
  HttpResult click = Click(path);
  ASSERT_EQ(click.status, 302);
  std::string spclid = SpclidOf(click.Header("Location"));
  ServerProcess& server = env->fixture->server();
  server.Signal(SIGKILL);
  server.Wait(std::chrono::seconds(10));
  ServerProcess::Options options;
  options.data_dir = server.data_dir();
  options.env["ADSERVER_PUBLIC_URL"] = kPublicUrl;
  ServerProcess restarted(options);
  ASSERT_TRUE(restarted.Start()) << restarted.error();
  HttpResult r =
      HttpClient("127.0.0.1", restarted.port())
          .Send("GET", "/admin/v1/clicks?campaignId=" + std::to_string(env->cpc_campaign),
                {{"Authorization", "Bearer " + restarted.admin_token()}});
  ASSERT_EQ(r.status, 200) << r.body;
  json row = json::parse(r.body)["clicks"][0];
  EXPECT_EQ(row["decisionId"], spclid);
  EXPECT_EQ(row["status"], "billed");
  // The same token still works after the restart (the installation's key is stored).
  HttpResult again = HttpClient("127.0.0.1", restarted.port()).Get(path);
  EXPECT_EQ(again.status, 302);
  EXPECT_EQ(SpclidOf(again.Header("Location")), spclid);
  // The campaign's spend (the budget counters, flushed every second: the kill came before the
  // flush of the last click) is the sum of its billed clicks again.
  restarted.Signal(SIGTERM);
  ASSERT_EQ(restarted.Wait(std::chrono::seconds(30)), 0);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((server.data_dir() + "/adserver.db").c_str(), &db,
                            SQLITE_OPEN_READONLY, nullptr),
            SQLITE_OK);
  auto scalar = [&](const std::string& sql) -> int64_t {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    int64_t value = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
    sqlite3_finalize(stmt);
    return value;
  };
  const std::string id = std::to_string(env->cpc_campaign);
  int64_t billed = scalar("SELECT SUM(price_micros) FROM clicks WHERE status = 'billed' AND "
                          "campaign_id = " + id);
  EXPECT_GT(billed, 0);
  EXPECT_EQ(scalar("SELECT total_spend_micros FROM campaign_counters WHERE campaign_id = " + id),
            billed);
  EXPECT_EQ(scalar("SELECT clicks FROM campaign_counters WHERE campaign_id = " + id),
            scalar("SELECT COUNT(*) FROM clicks WHERE status = 'billed' AND campaign_id = " + id));
  sqlite3_close(db);
}

}  // namespace
}  // namespace adserver::testing
