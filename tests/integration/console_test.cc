// The web console's first slice (issue 16) over real HTTP: the page and its assets are served
// from the binary with strict headers, and the calls the page makes (sign-in, the daily report
// with the session cookie) answer what it expects.
#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "integration/server_process.h"
#include "support/http_client.h"
#include "support/temp_dir.h"

namespace adserver::testing {
namespace {

using nlohmann::json;

class ConsoleTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Chains named by the configuration (issue 38): one renamed, one added.
    config_dir_ = new TempDir();
    const std::string config = config_dir_->File("adserver.toml");
    std::ofstream(config) << "[[network.chains]]\nid = 1\nname = \"Ethereum mainnet\"\n"
                             "explorer = \"https://eth.blockscout.com\"\n"
                             "[[network.chains]]\nid = 31337\nname = \"Local anvil\"\n";
    ServerProcess::Options options;
    options.extra_args = {"--config", config};
    server_ = new ServerProcess(options);
    started_ = server_->Start();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete config_dir_;
    config_dir_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(started_) << server_->error(); }

  static HttpClient Client() { return HttpClient("127.0.0.1", server_->port()); }

  static ServerProcess* server_;
  static TempDir* config_dir_;
  static bool started_;
};
ServerProcess* ConsoleTest::server_ = nullptr;
TempDir* ConsoleTest::config_dir_ = nullptr;
bool ConsoleTest::started_ = false;

void ExpectStrictHeaders(const HttpResult& r) {
  EXPECT_NE(r.Header("Content-Security-Policy").find("script-src 'self'"), std::string::npos)
      << r.Header("Content-Security-Policy");
  EXPECT_NE(r.Header("Content-Security-Policy").find("default-src 'none'"), std::string::npos);
  EXPECT_EQ(r.Header("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(r.Header("Cache-Control"), "no-cache");
  EXPECT_FALSE(r.Header("ETag").empty());
}

std::string UtcDay(std::chrono::sys_days day) {
  std::chrono::year_month_day ymd(day);
  char out[16];
  std::snprintf(out, sizeof out, "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
  return out;
}

TEST_F(ConsoleTest, ServesTheSignInPageWithLabelsAndStrictHeaders) {
  HttpClient client = Client();
  HttpResult page = client.Get("/console/");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.Header("Content-Type"), "text/html; charset=utf-8");
  ExpectStrictHeaders(page);
  EXPECT_NE(page.body.find(R"(<label for="email">Email</label>)"), std::string::npos);
  EXPECT_NE(page.body.find(R"(<input id="email")"), std::string::npos);
  EXPECT_NE(page.body.find(R"(<label for="password">Password</label>)"), std::string::npos);
  EXPECT_NE(page.body.find(R"(<input id="password")"), std::string::npos);
  EXPECT_NE(page.body.find(R"(<script src="chart.js")"), std::string::npos);
  EXPECT_NE(page.body.find(R"(<script src="app.js")"), std::string::npos);
  // Nothing from another origin (the CSP would refuse it anyway).
  EXPECT_EQ(page.body.find("http://"), std::string::npos);
  EXPECT_EQ(page.body.find("https://"), std::string::npos);
}

TEST_F(ConsoleTest, ServesTheBuiltInAssets) {
  HttpClient client = Client();
  HttpResult chart = client.Get("/console/chart.js");
  ASSERT_EQ(chart.status, 200);
  EXPECT_EQ(chart.Header("Content-Type"), "text/javascript; charset=utf-8");
  ExpectStrictHeaders(chart);
  EXPECT_GT(chart.body.size(), 100'000u);
  EXPECT_NE(chart.body.find("Chart.js v"), std::string::npos);

  HttpResult app = client.Get("/console/app.js");
  ASSERT_EQ(app.status, 200);
  EXPECT_EQ(app.Header("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_NE(app.body.find("/console/api/session"), std::string::npos);
  EXPECT_NE(app.body.find("/admin/v1/reports"), std::string::npos);

  HttpResult css = client.Get("/console/app.css");
  ASSERT_EQ(css.status, 200);
  EXPECT_EQ(css.Header("Content-Type"), "text/css; charset=utf-8");
  EXPECT_FALSE(css.body.empty());

  // The pages per role, one script each, in the page's load order before app.js.
  HttpResult page = client.Get("/console/");
  size_t previous = 0;
  for (const char* name :
       {"core.js", "markup.js", "publisher.js", "advertiser.js", "operator.js", "registry.js"}) {
    SCOPED_TRACE(name);
    size_t at = page.body.find(std::string(R"(<script src=")") + name + R"(" defer>)");
    ASSERT_NE(at, std::string::npos);
    EXPECT_GT(at, previous);
    previous = at;
    HttpResult script = client.Get(std::string("/console/") + name);
    ASSERT_EQ(script.status, 200);
    EXPECT_EQ(script.Header("Content-Type"), "text/javascript; charset=utf-8");
    ExpectStrictHeaders(script);
    EXPECT_NE(script.body.find("window.AdConsole"), std::string::npos);
  }
  EXPECT_GT(page.body.find(R"(<script src="app.js")"), previous);

  EXPECT_EQ(client.Get("/console/missing.js").status, 404);
  EXPECT_EQ(client.Send("POST", "/console/app.js", {}, "").status, 405);
}

TEST_F(ConsoleTest, RevalidatesWithTheETagAndRedirectsTheBarePath) {
  HttpClient client = Client();
  HttpResult first = client.Get("/console/app.js");
  ASSERT_EQ(first.status, 200);
  HttpResult again = client.Get("/console/app.js", {{"If-None-Match", first.Header("ETag")}});
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(client.Get("/console/app.js", {{"If-None-Match", "\"other\""}}).status, 200);

  HttpResult bare = client.Get("/console");
  EXPECT_EQ(bare.status, 308);
  EXPECT_EQ(bare.Header("Location"), "/console/");
}

// `body` gunzipped (empty on an error).
std::string Gunzip(const std::string& body) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return "";
  std::string out;
  char buffer[65536];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  z.avail_in = static_cast<uInt>(body.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - z.avail_out);
  }
  inflateEnd(&z);
  return rc == Z_STREAM_END ? out : "";
}

// Issue 38 item 5: a client that takes gzip gets every asset compressed (with its own validator
// and Vary), one that does not (or refuses it with q=0) the bytes as they are; the same content.
TEST_F(ConsoleTest, AssetsAreGzippedForClientsThatTakeIt) {
  HttpClient client = Client();
  size_t plain_total = 0;
  size_t gzip_total = 0;
  for (const char* path :
       {"/console/", "/console/core.js", "/console/markup.js", "/console/publisher.js",
        "/console/advertiser.js", "/console/operator.js", "/console/registry.js", "/console/app.js",
        "/console/app.css", "/console/chart.js"}) {
    SCOPED_TRACE(path);
    HttpResult plain = client.Get(path);
    ASSERT_EQ(plain.status, 200);
    EXPECT_TRUE(plain.Header("Content-Encoding").empty());
    EXPECT_EQ(plain.Header("Vary"), "Accept-Encoding");
    HttpResult gz = client.Get(path, {{"Accept-Encoding", "gzip, deflate, br"}});
    ASSERT_EQ(gz.status, 200);
    EXPECT_EQ(gz.Header("Content-Encoding"), "gzip");
    EXPECT_EQ(gz.Header("Vary"), "Accept-Encoding");
    EXPECT_EQ(gz.Header("Content-Type"), plain.Header("Content-Type"));
    EXPECT_NE(gz.Header("ETag"), plain.Header("ETag"));
    EXPECT_LT(gz.body.size(), plain.body.size());
    EXPECT_EQ(Gunzip(gz.body), plain.body);
    plain_total += plain.body.size();
    gzip_total += gz.body.size();
    // Revalidated per variant.
    EXPECT_EQ(client.Get(path, {{"Accept-Encoding", "gzip"}, {"If-None-Match", gz.Header("ETag")}})
                  .status,
              304);
    EXPECT_EQ(
        client.Get(path, {{"Accept-Encoding", "gzip"}, {"If-None-Match", plain.Header("ETag")}})
            .status,
        200);
    // Refused with q=0: the bytes as they are.
    HttpResult refused = client.Get(path, {{"Accept-Encoding", "gzip;q=0, identity"}});
    EXPECT_TRUE(refused.Header("Content-Encoding").empty());
    EXPECT_EQ(refused.body, plain.body);
  }
  // The console's first page and every script and style it loads.
  std::printf("console first load: %zu bytes plain, %zu bytes gzipped\n", plain_total, gzip_total);
  EXPECT_LT(gzip_total, 200'000u);
}

// Issue 38 item 5: the admin API's answers of 1 KiB or more go gzipped to a client that takes
// it (the console's fetch does), with Vary; the same JSON once gunzipped.
TEST_F(ConsoleTest, AdminAnswersAreGzippedForClientsThatTakeIt) {
  HttpClient client = Client();
  const std::string auth = "Bearer " + server_->admin_token();
  for (int i = 0; i < 20; ++i) {
    json project = {{"slug", "gzip-project-" + std::to_string(i)},
                    {"name", "A project listed to make the answer large " + std::to_string(i)}};
    ASSERT_EQ(
        client
            .Send("POST", "/admin/v1/projects",
                  {{"Authorization", auth}, {"Content-Type", "application/json"}}, project.dump())
            .status,
        201);
  }
  HttpResult plain = client.Get("/admin/v1/projects", {{"Authorization", auth}});
  ASSERT_EQ(plain.status, 200) << plain.body;
  ASSERT_GT(plain.body.size(), 1024u);
  EXPECT_TRUE(plain.Header("Content-Encoding").empty());
  EXPECT_EQ(plain.Header("Vary"), "Accept-Encoding");
  HttpResult gz =
      client.Get("/admin/v1/projects", {{"Authorization", auth}, {"Accept-Encoding", "gzip"}});
  ASSERT_EQ(gz.status, 200);
  EXPECT_EQ(gz.Header("Content-Encoding"), "gzip");
  EXPECT_LT(gz.body.size(), plain.body.size() / 3);
  EXPECT_EQ(json::parse(Gunzip(gz.body)), json::parse(plain.body));
  // An error answer (small) and the serving API are never compressed.
  HttpResult missing =
      client.Get("/admin/v1/projects/nope", {{"Authorization", auth}, {"Accept-Encoding", "gzip"}});
  EXPECT_EQ(missing.status, 404);
  EXPECT_TRUE(missing.Header("Content-Encoding").empty());
}

// What the page does after sign-in: who am I, then the last 14 days per day with the cookie.
TEST_F(ConsoleTest, SignedInUserReadsTheLastFourteenDaysWithTheCookie) {
  HttpClient client = Client();
  json user = {{"email", "console-ops@example.test"},
               {"password", "console-password-1"},
               {"role", "operator"}};
  HttpResult created = client.Send(
      "POST", "/admin/v1/users",
      {{"Authorization", "Bearer " + server_->admin_token()}, {"Content-Type", "application/json"}},
      user.dump());
  ASSERT_EQ(created.status, 201) << created.body;

  HttpResult signed_in =
      client.Post("/console/api/session",
                  json{{"email", user["email"]}, {"password", user["password"]}}.dump());
  ASSERT_EQ(signed_in.status, 201) << signed_in.body;
  std::string cookie = signed_in.Header("Set-Cookie");
  cookie = cookie.substr(0, cookie.find(';'));
  json session = json::parse(signed_in.body);
  EXPECT_EQ(session["user"]["role"], "operator");
  // The chains the console names (issue 38): the defaults with the configuration's changes.
  const json& chains = session["chains"];
  ASSERT_TRUE(chains.is_array()) << signed_in.body;
  EXPECT_EQ(
      chains[0],
      json({{"id", 1}, {"name", "Ethereum mainnet"}, {"explorer", "https://eth.blockscout.com"}}));
  EXPECT_EQ(chains.back(), json({{"id", 31337}, {"name", "Local anvil"}, {"explorer", nullptr}}));
  EXPECT_EQ(json::parse(client.Get("/console/api/session", {{"Cookie", cookie}}).body)["chains"],
            chains);

  auto tomorrow = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now()) +
                  std::chrono::days(1);
  std::string target =
      "/admin/v1/reports?granularity=day&from=" + UtcDay(tomorrow - std::chrono::days(14)) +
      "&to=" + UtcDay(tomorrow);
  HttpResult report = client.Get(target, {{"Cookie", cookie}});
  ASSERT_EQ(report.status, 200) << report.body;
  json body = json::parse(report.body);
  EXPECT_TRUE(body["rows"].is_array());
  EXPECT_TRUE(body["totals"].contains("impressions"));
  EXPECT_TRUE(body["totals"].contains("clicks"));
  EXPECT_TRUE(body["totals"].contains("conversions"));

  HttpResult out =
      client.Send("DELETE", "/console/api/session",
                  {{"Cookie", cookie}, {"X-CSRF-Token", session["csrfToken"].get<std::string>()}});
  EXPECT_EQ(out.status, 204) << out.body;
  EXPECT_EQ(client.Get(target, {{"Cookie", cookie}}).status, 401);
}

}  // namespace
}  // namespace adserver::testing
