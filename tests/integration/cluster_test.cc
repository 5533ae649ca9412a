// Cluster mode over real HTTP (issue 17): three `adserver serve` nodes on one PostgreSQL and
// one Redis (CTest's fixtures), nginx in front where the test is about the balanced cluster.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "integration/fixture.h"
#include "integration/server_process.h"
#include "support/http_client.h"
#include "support/postgres/test_database.h"
#include "support/redis/test_redis.h"
#include "support/temp_dir.h"

namespace adserver::testing {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr char kIdentityKeys[] = "1:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
constexpr char kEventsKeys[] = "1:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";

json Body(const HttpResult& r) { return json::parse(r.body, nullptr, false); }

// The campaign a 200 served; "" for anything else (a 204 has no body).
std::string CampaignOf(const HttpResult& r) {
  json b = Body(r);
  return r.status == 200 && b.is_object() ? b.value("campaignId", "") : "";
}

// A consented ad request: with `wallets`, or with none and the identity `cookie`.
HttpResult AdRequest(uint16_t port, const std::string& key, const std::vector<std::string>& wallets,
                     const std::string& cookie = "") {
  json body = {{"imageFormat", "LANDSCAPE"}, {"cookieConsent", true}};
  if (!wallets.empty()) body["walletAddresses"] = wallets;
  HttpHeaders headers = {{"Content-Type", "application/json"}, {"x-api-key", key}};
  if (!cookie.empty()) headers.emplace_back("Cookie", cookie);
  return HttpClient("127.0.0.1", port).Send("POST", "/v1/ads", headers, body.dump());
}

// nginx round-robin over the nodes, in a prefix of its own.
class Balancer {
 public:
  Balancer(const std::vector<uint16_t>& ports, uint16_t port) : port_(port) {
    std::string conf = "worker_processes 1;\nerror_log " + dir_.File("error.log") +
                       " warn;\npid " + dir_.File("nginx.pid") +
                       ";\nevents { worker_connections 1024; }\nhttp {\n  access_log off;\n"
                       "  client_body_temp_path " + dir_.File("body") + ";\n"
                       "  proxy_temp_path " + dir_.File("proxy") + ";\n"
                       "  upstream nodes {\n";
    for (uint16_t p : ports) conf += "    server 127.0.0.1:" + std::to_string(p) + ";\n";
    conf += "    keepalive 16;\n  }\n  server {\n    listen 127.0.0.1:" + std::to_string(port) +
            ";\n    location / {\n      proxy_pass http://nodes;\n      proxy_http_version 1.1;\n"
            "      proxy_set_header Connection \"\";\n    }\n  }\n}\n";
    std::ofstream(dir_.File("nginx.conf")) << conf;
    pid_ = fork();
    if (pid_ == 0) {
      execlp("nginx", "nginx", "-p", dir_.path().c_str(), "-c", dir_.File("nginx.conf").c_str(),
             "-e", dir_.File("error.log").c_str(), "-g", "daemon off;", nullptr);
      _exit(127);
    }
  }
  ~Balancer() {
    if (pid_ > 0) {
      kill(pid_, SIGQUIT);
      waitpid(pid_, nullptr, 0);
    }
  }
  uint16_t port() const { return port_; }
  // True once nginx answers.
  bool Ready() {
    for (int i = 0; i < 100; ++i) {
      if (HttpClient("127.0.0.1", port_).Send("GET", "/healthz", {}, "").status == 200) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

 private:
  TempDir dir_;
  uint16_t port_;
  pid_t pid_ = -1;
};

// A port the kernel says is free now (nginx needs one named in its configuration).
uint16_t FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ADSERVER_REQUIRE_TEST_DATABASE(db_);
    if (!redis_.error().empty()) FAIL() << redis_.error();
    if (redis_.url().empty()) GTEST_SKIP() << redis_.skip_reason();
  }

  ServerProcess::Options NodeOptions(int n) {
    ServerProcess::Options o;
    o.env = {{"ADSERVER_DATABASE_URL", db_.url()},
             {"ADSERVER_REDIS_URL", redis_.url()},
             {"ADSERVER_REDIS_KEY_PREFIX", redis_.prefix()},
             {"ADSERVER_NODE_ID", "node-" + std::to_string(n)},
             {"ADSERVER_IDENTITY_KEYS", kIdentityKeys},
             {"ADSERVER_EVENTS_KEYS", kEventsKeys}};
    o.extra_args = {"--config", ConfigFile()};
    return o;
  }

  // Invalid-traffic checks off (the test clicks from one address without a user agent), and
  // short cluster intervals.
  std::string ConfigFile() {
    std::string path = dir_.File("cluster.toml");
    std::ofstream(path) << kTrafficChecksOff
                        << "[cluster]\nlease_refill_ms = 50\ncaps_sync_ms = 50\n"
                           "change_poll_ms = 500\n";
    return path;
  }

  // Node 1 with the fixture's dataset (loaded through its admin API), then `more` plain nodes.
  void StartCluster(int more) {
    first_ = std::make_unique<ServingFixture>(NodeOptions(1));
    ASSERT_TRUE(first_->ok()) << first_->error() << "\n" << first_->server().Output();
    for (int i = 0; i < more; ++i) {
      others_.push_back(std::make_unique<ServerProcess>(NodeOptions(i + 2)));
      ASSERT_TRUE(others_.back()->Start()) << others_.back()->error() << "\n"
                                           << others_.back()->Output();
    }
  }

  // Polls `ok` until it holds; how long that took, or nullopt after `limit`.
  template <typename F>
  std::optional<std::chrono::milliseconds> Within(std::chrono::milliseconds limit, F ok) {
    auto start = Clock::now();
    while (Clock::now() - start < limit) {
      if (ok()) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::nullopt;
  }

  TestDatabase db_;
  TestRedis redis_;
  TempDir dir_;
  std::unique_ptr<ServingFixture> first_;
  std::vector<std::unique_ptr<ServerProcess>> others_;
};

TEST_F(ClusterTest, OneEngineWithoutTheOtherIsAStartUpErrorNamingTheMissingOne) {
  ServerProcess::Options o;
  o.env = {{"ADSERVER_DATABASE_URL", db_.url()}};
  ServerProcess node(o);
  EXPECT_FALSE(node.Start(std::chrono::seconds(10)));
  EXPECT_NE(node.Output().find("cluster.redis_url"), std::string::npos) << node.Output();
  ServerProcess::Options r;
  r.env = {{"ADSERVER_REDIS_URL", redis_.url()}};
  ServerProcess other(r);
  EXPECT_FALSE(other.Start(std::chrono::seconds(10)));
  EXPECT_NE(other.Output().find("cluster.database_url"), std::string::npos) << other.Output();
}

TEST_F(ClusterTest, AnAdminWriteOnOneNodeIsServedByAnotherWithinASecond) {
  StartCluster(2);
  ServerProcess& third = *others_[1];
  // The dataset written through node 1 is served by node 3.
  std::optional<std::chrono::milliseconds> served = Within(std::chrono::seconds(5), [&] {
    HttpResult r = AdRequest(third.port(), first_->keys.open_live, {first_->wallets.uniswap});
    return CampaignOf(r) == std::to_string(first_->aave_campaign);
  });
  ASSERT_TRUE(served) << "node 3 never served the dataset node 1 wrote (inventory and activity)";
  // A key created on node 1 opens node 3 within a second.
  HttpResult key = first_->Admin(
      "POST", "/admin/v1/publishers/" + std::to_string(first_->keys.open_publisher) + "/keys",
      json{{"test", false}});
  ASSERT_EQ(key.status, 201) << key.body;
  std::string new_key = Body(key).value("key", "");
  ASSERT_FALSE(new_key.empty()) << key.body;
  auto start = Clock::now();
  std::optional<std::chrono::milliseconds> took = Within(std::chrono::seconds(3), [&] {
    return AdRequest(third.port(), new_key, {first_->wallets.uniswap}).status == 200;
  });
  ASSERT_TRUE(took) << "the key never reached node 3";
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(1000))
      << "took " << took->count() << " ms";
}

TEST_F(ClusterTest, ACookieSetByOneNodeIsRecognisedByAnother) {
  StartCluster(1);
  HttpResult first = AdRequest(first_->server().port(), first_->keys.open_live,
                               {first_->wallets.uniswap});
  ASSERT_EQ(first.status, 200) << first.body;
  std::string cookie;
  for (const auto& [name, value] : first.headers) {
    if (name == "Set-Cookie" && value.starts_with("adserver_id=")) {
      cookie = value.substr(0, value.find(';'));
    }
  }
  ASSERT_FALSE(cookie.empty());
  ServerProcess& second = *others_[0];
  std::optional<std::chrono::milliseconds> served = Within(std::chrono::seconds(5), [&] {
    HttpResult r = AdRequest(second.port(), first_->keys.open_live, {}, cookie);
    return CampaignOf(r) == std::to_string(first_->aave_campaign);
  });
  EXPECT_TRUE(served) << "node 2 did not serve the person of node 1's cookie";
}

TEST_F(ClusterTest, ABudgetSpentThroughThreeNodesBehindNginxIsNeverPassed) {
  StartCluster(2);
  // A CPM 10 campaign (10,000 micros an impression) with a budget of 50 impressions.
  // 50 impressions of 10,000 micros.
  HttpResult patched =
      first_->Admin("PATCH", "/admin/v1/campaigns/" + std::to_string(first_->aave_campaign),
                    json{{"budget", {{"total", "0.5"}}}, {"pacing", "asap"}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  std::vector<uint16_t> ports = {first_->server().port(), others_[0]->port(), others_[1]->port()};
  Balancer nginx(ports, FreePort());
  ASSERT_TRUE(nginx.Ready()) << "nginx did not start";
  // Until every node has seen the budget: then spend it from four threads through nginx until
  // it is gone (or 20 s pass).
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const std::string aave = std::to_string(first_->aave_campaign);
  std::atomic<int> filled{0};
  std::atomic<int> requests{0};
  auto start = Clock::now();
  std::vector<std::thread> load;
  for (int t = 0; t < 4; ++t) {
    load.emplace_back([&] {
      while (filled.load() < 50 && Clock::now() - start < std::chrono::seconds(20)) {
        HttpResult r = AdRequest(nginx.port(), first_->keys.open_live, {first_->wallets.uniswap});
        requests.fetch_add(1);
        if (CampaignOf(r) == aave) filled.fetch_add(1);
      }
    });
  }
  for (std::thread& t : load) t.join();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(filled.load(), 50) << "in " << seconds << " s, " << requests.load() << " requests";
  // Spent: no node serves it again.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (int i = 0; i < 30; ++i) {
    HttpResult r = AdRequest(nginx.port(), first_->keys.open_live, {first_->wallets.uniswap});
    EXPECT_NE(CampaignOf(r), aave) << "served past its budget (request " << i
                                                     << ")";
  }
}

TEST_F(ClusterTest, ABulkImportThroughNodeTwoIsTargetableOnEveryNode) {
  StartCluster(2);
  const std::string wallet = "0x8888888888888888888888888888888888888888";
  for (ServerProcess* node : {&first_->server(), others_[0].get(), others_[1].get()}) {
    EXPECT_EQ(CampaignOf(AdRequest(node->port(), first_->keys.open_live, {wallet})), "")
        << "a wallet nobody imported yet";
  }
  std::string ndjson = json{{"wallet", wallet}, {"project", "uniswap"}, {"chainId", 1},
                            {"timestamp", "2026-11-26T00:00:00Z"}}
                           .dump() +
                       "\n";
  HttpResult imported = HttpClient("127.0.0.1", others_[0]->port())
                            .Send("POST", "/admin/v1/activity",
                                  {{"Authorization", "Bearer " + others_[0]->admin_token()},
                                   {"Content-Type", "application/x-ndjson"}},
                                  ndjson);
  ASSERT_EQ(imported.status, 200) << imported.body;
  const std::string aave = std::to_string(first_->aave_campaign);
  // Node 2 answers from it as soon as the import returns; the others within a second.
  EXPECT_EQ(CampaignOf(AdRequest(others_[0]->port(), first_->keys.open_live, {wallet})), aave);
  for (ServerProcess* node : {&first_->server(), others_[1].get()}) {
    auto start = Clock::now();
    std::optional<std::chrono::milliseconds> took = Within(std::chrono::seconds(3), [&] {
      return CampaignOf(AdRequest(node->port(), first_->keys.open_live, {wallet})) == aave;
    });
    ASSERT_TRUE(took) << "the import never reached the node on port " << node->port();
    EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(1000)) << took->count() << " ms";
  }
}

TEST_F(ClusterTest, AClickServedByOneNodeAndClickedThroughTwoOthersCountsOnce) {
  StartCluster(2);
  HttpResult served =
      AdRequest(first_->server().port(), first_->keys.open_live, {first_->wallets.uniswap});
  ASSERT_EQ(CampaignOf(served), std::to_string(first_->aave_campaign)) << served.body;
  std::string url = Body(served).value("ctaUrl", "");
  size_t at = url.find("/v1/click/");
  ASSERT_NE(at, std::string::npos) << url;
  std::string path = url.substr(at);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // past the too-fast window
  for (ServerProcess* node : {others_[0].get(), others_[1].get()}) {
    HttpResult click = HttpClient("127.0.0.1", node->port()).Send("GET", path, {}, "");
    EXPECT_EQ(click.status, 302) << click.body;
    EXPECT_NE(click.Header("Location").find("spclid="), std::string::npos);
  }
  // One billed click and one duplicate, whichever node is asked.
  HttpResult listed = HttpClient("127.0.0.1", others_[1]->port())
                          .Send("GET",
                                "/admin/v1/clicks?campaignId=" +
                                    std::to_string(first_->aave_campaign),
                                {{"Authorization", "Bearer " + others_[1]->admin_token()}}, "");
  ASSERT_EQ(listed.status, 200) << listed.body;
  json clicks = Body(listed)["clicks"];
  ASSERT_EQ(clicks.size(), 2u) << listed.body;
  int billed = 0, duplicate = 0;
  for (const json& c : clicks) {
    billed += c.value("status", "") == "billed";
    duplicate += c.value("status", "") == "duplicate";
  }
  EXPECT_EQ(billed, 1) << listed.body;
  EXPECT_EQ(duplicate, 1) << listed.body;
}

// Issue 36 item 6: a campaign's factor on a publisher is learned from the cluster's traffic,
// not only the node's: what one node serves of a CPC campaign reaches another node's
// per-placement learning through PostgreSQL, though that node never served it.
TEST_F(ClusterTest, PerPlacementCountsOfOneNodeReachTheOthersLearning) {
  StartCluster(1);
  HttpResult aave =
      first_->Admin("GET", "/admin/v1/campaigns/" + std::to_string(first_->aave_campaign));
  ASSERT_EQ(aave.status, 200) << aave.body;
  HttpResult created = first_->Admin("POST", "/admin/v1/campaigns",
                                     {{"communityId", Body(aave)["communityId"]},
                                      {"name", "Clicks from swappers"},
                                      {"status", "active"},
                                      {"pricing", {{"model", "CPC"}, {"bid", 50}}},
                                      {"targeting", {{"projects", {"uniswap"}}}}});
  ASSERT_EQ(created.status, 201) << created.body;
  const int64_t cpc = Body(created)["id"].get<int64_t>();
  HttpResult ad = first_->Admin("POST", "/admin/v1/ads",
                                {{"campaignId", cpc},
                                 {"headline", "Swap and earn"},
                                 {"content", "Clicks pay."},
                                 {"ctaUrl", "https://cpc.example"},
                                 {"ctaLabel", "Go"},
                                 {"images", {{"LANDSCAPE", "https://cdn.example/cpc.png"}}}});
  ASSERT_EQ(ad.status, 201) << ad.body;
  auto metric = [](ServerProcess& node, const std::string& name) -> int64_t {
    HttpResult r =
        HttpClient("127.0.0.1", node.port())
            .Send("GET", "/metrics", {{"Authorization", "Bearer " + node.admin_token()}}, "");
    size_t at = r.body.find("\n" + name + " ");
    return at == std::string::npos ? -1 : std::stoll(r.body.substr(at + name.size() + 2));
  };
  EXPECT_EQ(metric(*others_[0], "adserver_placement_pairs"), 0);
  EXPECT_EQ(metric(*others_[0], "adserver_placement_followed_rows"), 0);
  // Node 1 serves the CPC campaign (its bid times the prior rate outbids the CPM ones).
  ASSERT_TRUE(Within(std::chrono::seconds(10), [&] {
    return CampaignOf(AdRequest(first_->server().port(), first_->keys.open_live,
                                {first_->wallets.uniswap})) == std::to_string(cpc);
  }));
  for (int i = 0; i < 5; ++i) {
    AdRequest(first_->server().port(), first_->keys.open_live, {first_->wallets.uniswap});
  }
  EXPECT_TRUE(Within(std::chrono::seconds(10), [&] {
    return metric(first_->server(), "adserver_placement_shared_pairs") >= 1;
  }));
  // Node 2 follows node 1's row and learns the pair from it.
  EXPECT_TRUE(Within(std::chrono::seconds(10),
                     [&] { return metric(*others_[0], "adserver_placement_followed_rows") >= 1; }));
  EXPECT_TRUE(Within(std::chrono::seconds(10),
                     [&] { return metric(*others_[0], "adserver_placement_pairs") >= 1; }));
  EXPECT_EQ(metric(*others_[0], "adserver_placement_shared_pairs"), 0) << "node 2 served nothing";
}

// Engines of the test's own, so that their outages disturb no other test.
class ClusterOutageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("ADSERVER_TEST_POSTGRES_DIR") == nullptr) {
      GTEST_SKIP() << "run through CTest (PostgreSQL and Redis are needed)";
    }
    ASSERT_EQ(Script("postgres", "start", pg_.path()), 0);
    ASSERT_EQ(Script("redis", "start", redis_.path()), 0);
    std::ifstream(pg_.File("url")) >> pg_url_;
    std::ifstream(redis_.File("url")) >> redis_url_;
    pg_url_ += "/postgres";
  }
  void TearDown() override {
    Script("postgres", "stop", pg_.path());
    Script("redis", "stop", redis_.path());
  }
  static int Script(const std::string& engine, const std::string& command,
                    const std::filesystem::path& dir) {
    std::string line = std::string(ADSERVER_TEST_SUPPORT_DIR) + "/" + engine + ".sh " + command +
                       " " + dir.string() + " >/dev/null";
    return std::system(line.c_str());
  }
  ServerProcess::Options NodeOptions(int n) {
    ServerProcess::Options o;
    o.env = {{"ADSERVER_DATABASE_URL", pg_url_},
             {"ADSERVER_REDIS_URL", redis_url_},
             {"ADSERVER_NODE_ID", "node-" + std::to_string(n)},
             {"ADSERVER_IDENTITY_KEYS", kIdentityKeys},
             {"ADSERVER_EVENTS_KEYS", kEventsKeys}};
    std::string path = dir_.File("cluster.toml");
    std::ofstream(path) << kTrafficChecksOff
                        << "[cluster]\nlease_refill_ms = 50\ncaps_sync_ms = 50\n"
                           "change_poll_ms = 500\n";
    o.extra_args = {"--config", path};
    return o;
  }

  TempDir pg_, redis_, dir_;
  std::string pg_url_, redis_url_;
};

TEST_F(ClusterOutageTest, ServingNeverErrsWhileRedisAndPostgresRestartAndTheChecksStillHold) {
  ServingFixture first(NodeOptions(1));
  ASSERT_TRUE(first.ok()) << first.error() << "\n" << first.server().Output();
  ServerProcess second(NodeOptions(2));
  ASSERT_TRUE(second.Start()) << second.error();
  const std::string aave = std::to_string(first.aave_campaign);
  // An ad served before the outages, clicked while PostgreSQL is down.
  HttpResult served = AdRequest(second.port(), first.keys.open_live, {first.wallets.uniswap});
  std::string url = Body(served).value("ctaUrl", "");
  ASSERT_NE(url.find("/v1/click/"), std::string::npos) << served.body;
  // An advertiser of its own, posting an event while PostgreSQL is down.
  HttpResult community = first.Admin(
      "POST", "/admin/v1/communities", json{{"name", "Shop"}, {"logoUrl", "https://s.example/l.png"}});
  ASSERT_EQ(community.status, 201) << community.body;
  std::string community_id = std::to_string(Body(community)["id"].get<int64_t>());
  HttpResult advertiser_key =
      first.Admin("POST", "/admin/v1/communities/" + community_id + "/keys", json::object());
  ASSERT_EQ(advertiser_key.status, 201) << advertiser_key.body;
  const std::string event_key = Body(advertiser_key).value("key", "");
  // A budget of 40 impressions, spent in bursts across the outages.
  HttpResult patched = first.Admin("PATCH", "/admin/v1/campaigns/" + aave,
                                   json{{"budget", {{"total", "0.4"}}}, {"pacing", "asap"}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  std::this_thread::sleep_for(std::chrono::seconds(1));
  std::atomic<bool> stop{false};
  std::atomic<int> filled{0}, errors{0}, answered{0};
  std::vector<std::thread> load;
  // Joined however the test ends (an assertion returns early).
  struct Joiner {
    std::atomic<bool>& stop;
    std::vector<std::thread>& threads;
    ~Joiner() {
      stop.store(true);
      for (std::thread& t : threads) {
        if (t.joinable()) t.join();
      }
    }
  } joiner{stop, load};
  for (uint16_t port : {first.server().port(), second.port()}) {
    load.emplace_back([&, port] {
      while (!stop.load()) {
        HttpResult r = AdRequest(port, first.keys.open_live, {first.wallets.uniswap});
        answered.fetch_add(1);
        if (r.status != 200 && r.status != 204) errors.fetch_add(1);
        if (CampaignOf(r) == aave) filled.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(40));
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_EQ(Script("redis", "halt", redis_.path()), 0);
  {
    // A node started while Redis is away serves (budgeted campaigns wait for their leases) and
    // says so in /readyz.
    ServerProcess third(NodeOptions(3));
    ASSERT_TRUE(third.Start()) << third.error() << "\n" << third.Output();
    HttpResult r = AdRequest(third.port(), first.keys.open_live, {first.wallets.uniswap});
    EXPECT_TRUE(r.status == 200 || r.status == 204) << r.status << " " << r.body;
    HttpResult ready = HttpClient("127.0.0.1", third.port()).Send("GET", "/readyz", {}, "");
    EXPECT_NE(ready.body.find(R"("redis":"unavailable")"), std::string::npos) << ready.body;
  }
  ASSERT_EQ(Script("redis", "resume", redis_.path()), 0);  // empty: leases are seeded again
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_EQ(Script("postgres", "halt", pg_.path()), 0);
  // PostgreSQL down: serving goes on from the snapshots; an admin write answers 503; a click is
  // redirected, kept on the node's disk and delivered later.
  HttpResult click =
      HttpClient("127.0.0.1", second.port()).Send("GET", url.substr(url.find("/v1/click/")), {}, "");
  EXPECT_EQ(click.status, 302) << click.body;
  json event = {{"cookieConsent", false},
                {"event", {{"name", "sign_up"}}},
                {"walletAddresses", {"0x9999999999999999999999999999999999999999"}}};
  HttpResult posted =
      HttpClient("127.0.0.1", second.port())
          .Send("POST", "/v1/events", {{"Content-Type", "application/json"}, {"x-api-key", event_key}},
                event.dump());
  EXPECT_EQ(posted.status, 200) << posted.body;
  HttpResult degraded = HttpClient("127.0.0.1", second.port()).Send("GET", "/readyz", {}, "");
  EXPECT_NE(degraded.body.find(R"("clicksBuffered":1,"advertiserEventsBuffered":1)"),
            std::string::npos)
      << degraded.body;
  HttpResult refused =
      first.Admin("PATCH", "/admin/v1/campaigns/" + aave, json{{"name", "During the outage"}});
  EXPECT_EQ(refused.status, 503) << refused.body;
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_EQ(Script("postgres", "resume", pg_.path()), 0);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  stop.store(true);
  for (std::thread& t : load) t.join();
  EXPECT_EQ(errors.load(), 0) << "of " << answered.load() << " ad requests";
  // After a Redis loss each node may spend what it held plus what the reseed (from the spend
  // flushed to PostgreSQL, up to a second old) gives again: at most a slice per node and a
  // second of serving (25 requests a second per node here) past the budget.
  EXPECT_LE(filled.load(), 40 + 2 + 2 * 25) << "impressions past the budget";
  EXPECT_GT(filled.load(), 0);
  // Writes work again and reach the other node within a second.
  HttpResult key = first.Admin(
      "POST", "/admin/v1/publishers/" + std::to_string(first.keys.open_publisher) + "/keys",
      json{{"test", false}});
  ASSERT_EQ(key.status, 201) << key.body;
  std::string new_key = Body(key).value("key", "");
  auto start = Clock::now();
  while (Clock::now() - start < std::chrono::seconds(3) &&
         AdRequest(second.port(), new_key, {first.wallets.aave}).status == 401) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(1000));
  HttpResult ready = HttpClient("127.0.0.1", second.port()).Send("GET", "/readyz", {}, "");
  EXPECT_NE(ready.body.find(
                R"("postgres":"ok","redis":"ok","clicksBuffered":0,"advertiserEventsBuffered":0)"),
            std::string::npos)
      << ready.body;
  // The buffered advertiser event reached PostgreSQL.
  HttpResult events = first.Admin("GET", "/admin/v1/events?communityId=" + community_id);
  ASSERT_EQ(events.status, 200) << events.body;
  ASSERT_EQ(Body(events)["events"].size(), 1u) << events.body;
  EXPECT_EQ(Body(events)["events"][0].value("name", ""), "sign_up");
  // The buffered click reached PostgreSQL, billed.
  HttpResult listed = first.Admin("GET", "/admin/v1/clicks?campaignId=" + aave);
  ASSERT_EQ(listed.status, 200) << listed.body;
  ASSERT_EQ(Body(listed)["clicks"].size(), 1u) << listed.body;
  EXPECT_EQ(Body(listed)["clicks"][0].value("status", ""), "billed");
}

}  // namespace
}  // namespace adserver::testing
