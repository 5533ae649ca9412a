// GET /metrics (issue 19 item 1) over the real binary: the operator's on the main port (admin
// token), unauthenticated on metrics.listen; the counters follow what was served and clicked;
// `promtool check metrics` accepts the text; and a real Prometheus scrapes it. promtool and
// prometheus come from Debian's `prometheus` package (scripts/install-deps.sh); without them
// the checks that need them are skipped, unless ADSERVER_REQUIRE_PROMETHEUS=1 (CI).
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <fcntl.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "integration/fixture.h"
#include "support/temp_dir.h"

extern char** environ;

namespace adserver::testing {
namespace {

using nlohmann::json;

bool Have(const char* tool) {
  std::string cmd = std::string("command -v ") + tool + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

bool RequirePrometheus() {
  const char* v = std::getenv("ADSERVER_REQUIRE_PROMETHEUS");
  return v != nullptr && std::string(v) == "1";
}

// The value of the first sample whose line starts with `series` (name and labels), or -1.
double Value(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

// The port of the metrics listener, from its JSON log line.
uint16_t MetricsPort(const std::string& output) {
  std::smatch match;
  std::regex re(R"re("msg":"metrics listening","port":(\d+))re");
  if (!std::regex_search(output, match, re)) return 0;
  return static_cast<uint16_t>(std::stoi(match[1]));
}

class MetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.File("adserver.toml"))
        << "[metrics]\nlisten = \"127.0.0.1:0\"\ncampaign_spend = true\n" << kTrafficChecksOff;
    ServerProcess::Options options;
    options.extra_args = {"--config", dir_.File("adserver.toml")};
    options.log_level = "info";
    fixture_ = std::make_unique<ServingFixture>(options);
    ASSERT_TRUE(fixture_->ok()) << fixture_->error();
    metrics_port_ = MetricsPort(fixture_->server().Output());
    ASSERT_NE(metrics_port_, 0) << fixture_->server().Output();
  }
  std::string Scrape() {
    HttpResult r = HttpClient("127.0.0.1", metrics_port_).Send("GET", "/metrics", {});
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.Header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    return r.body;
  }
  // Serves the Uniswap wallet once (the Aave campaign's ad) and follows its click.
  void ServeAndClick() {
    json body = {{"imageFormat", "LANDSCAPE"}, {"walletAddresses", {fixture_->wallets.uniswap}}};
    HttpResult ad = fixture_->Client().Send(
        "POST", "/v1/ads",
        {{"Content-Type", "application/json"}, {"x-api-key", fixture_->keys.open_live}},
        body.dump());
    ASSERT_EQ(ad.status, 200) << ad.body;
    std::string cta = json::parse(ad.body).at("ctaUrl");
    HttpResult click = fixture_->Client().Send("GET", cta.substr(cta.find("/v1/click/")), {});
    ASSERT_EQ(click.status, 302);
  }

  TempDir dir_;
  std::unique_ptr<ServingFixture> fixture_;
  uint16_t metrics_port_ = 0;
};

TEST_F(MetricsTest, OperatorOnlyOnTheMainPortAndOpenOnTheMetricsListener) {
  HttpClient main = fixture_->Client();
  EXPECT_EQ(main.Send("GET", "/metrics", {}).status, 401);
  EXPECT_EQ(main.Send("GET", "/metrics", {{"Authorization", "Bearer wrong-wrong-wrong"}}).status,
            401);
  HttpResult ok = main.Send(
      "GET", "/metrics", {{"Authorization", "Bearer " + fixture_->server().admin_token()}});
  EXPECT_EQ(ok.status, 200);
  EXPECT_NE(ok.body.find("# TYPE adserver_http_requests_total counter"), std::string::npos);
  // The metrics listener serves nothing else.
  EXPECT_EQ(HttpClient("127.0.0.1", metrics_port_).Send("GET", "/v1/ads", {}).status, 404);
}

TEST_F(MetricsTest, CountersFollowServingAndPromtoolAcceptsTheText) {
  const std::string before = Scrape();
  const std::string fill = R"(adserver_ad_requests_total{variant="current",outcome="fill"})";
  const std::string billed = R"(adserver_clicks_total{status="billed",reason=""})";
  const double fills = Value(before, fill);
  ASSERT_GE(fills, 0) << before;
  ServeAndClick();
  // The click reaches the counter when its commit is done (before the 302 left).
  std::string after = Scrape();
  EXPECT_EQ(Value(after, fill), fills + 1) << after;
  EXPECT_EQ(Value(after, R"(adserver_impressions_total{validity="valid",reason=""})"), 1) << after;
  EXPECT_EQ(Value(after, billed), 1) << after;
  EXPECT_GE(Value(after, R"(adserver_http_requests_total{route="/v1/ads",method="POST",status="200"})"),
            1);
  EXPECT_GE(Value(after,
                  R"(adserver_http_request_duration_seconds_count{route="/v1/ads",method="POST"})"),
            1);
  EXPECT_EQ(Value(after, "adserver_campaign_spend_total{campaign=\"" +
                             std::to_string(fixture_->aave_campaign) + "\"}"),
            0.01)  // one CPM-10 impression
      << after;
  EXPECT_GT(Value(after, "process_resident_memory_bytes"), 1e6);
  EXPECT_GT(Value(after, "process_open_fds"), 3);
  EXPECT_EQ(Value(after, R"(adserver_wallet_table_state{state="ready"})") +
                Value(after, R"(adserver_wallet_table_state{state="building"})"),
            1);
  EXPECT_GE(Value(after, R"(adserver_snapshot_version{snapshot="catalog"})"), 1);
  EXPECT_GE(Value(after, "adserver_http_connections_accepted_total"), 3);

  if (!Have("promtool")) {
    if (RequirePrometheus()) FAIL() << "promtool missing (apt install prometheus)";
    GTEST_SKIP() << "promtool missing";
  }
  std::string file = dir_.File("metrics.txt");
  std::ofstream(file) << after;
  std::string cmd = "promtool check metrics < " + file + " > " + dir_.File("promtool.out") + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream report(dir_.File("promtool.out"));
  std::string text((std::istreambuf_iterator<char>(report)), {});
  EXPECT_EQ(rc, 0) << text;
}

TEST_F(MetricsTest, ARealPrometheusScrapesIt) {
  if (!Have("prometheus")) {
    if (RequirePrometheus()) FAIL() << "prometheus missing (apt install prometheus)";
    GTEST_SKIP() << "prometheus missing";
  }
  ServeAndClick();
  // A free port for Prometheus's own web API, from the kernel.
  uint16_t web_port = 0;
  FILE* py = popen("python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); "
                   "print(s.getsockname()[1])'",
                   "r");
  ASSERT_NE(py, nullptr);
  char buffer[16] = {};
  ASSERT_NE(fgets(buffer, sizeof buffer, py), nullptr);
  pclose(py);
  web_port = static_cast<uint16_t>(std::atoi(buffer));
  ASSERT_NE(web_port, 0);
  std::ofstream(dir_.File("prometheus.yml"))
      << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
      << "scrape_configs:\n  - job_name: adserver\n    static_configs:\n"
      << "      - targets: ['127.0.0.1:" << metrics_port_ << "']\n";
  std::string config = "--config.file=" + dir_.File("prometheus.yml");
  std::string storage = "--storage.tsdb.path=" + dir_.File("tsdb");
  std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(web_port);
  std::string log = dir_.File("prometheus.log");
  const char* argv[] = {"prometheus", config.c_str(), storage.c_str(), listen.c_str(),
                        "--log.level=warn", nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawnp(&pid, "prometheus", &actions, nullptr, const_cast<char**>(argv), environ),
            0);
  posix_spawn_file_actions_destroy(&actions);

  // Prometheus's query API: up{job="adserver"} == 1 and the fill counter as scraped.
  HttpClient api("127.0.0.1", web_port);
  auto query = [&](const std::string& promql) -> double {
    std::string encoded;
    for (char c : promql) {
      if (isalnum(static_cast<unsigned char>(c)) || c == '_') {
        encoded += c;
      } else {
        char hex[4];
        std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
        encoded += hex;
      }
    }
    HttpResult r = api.Send("GET", "/api/v1/query?query=" + encoded, {});
    if (r.status != 200) return -1;
    json j = json::parse(r.body, nullptr, false);
    if (j.is_discarded() || j["data"]["result"].empty()) return -1;
    return std::stod(j["data"]["result"][0]["value"][1].get<std::string>());
  };
  double up = -1, fills = -1, billed = -1;
  for (int i = 0; i < 300 && (up != 1 || fills < 1 || billed != 1); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    up = query(R"(up{job="adserver"})");
    fills = query(R"(adserver_ad_requests_total{variant="current",outcome="fill"})");
    billed = query(R"(adserver_clicks_total{status="billed"})");
  }
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream log_file(log);
  std::string log_text((std::istreambuf_iterator<char>(log_file)), {});
  EXPECT_EQ(up, 1) << log_text;
  EXPECT_GE(fills, 1) << log_text;
  EXPECT_EQ(billed, 1) << log_text;
}

}  // namespace
}  // namespace adserver::testing
