// SIGHUP reload (issue 19 item 5) over the real binary: the identity key ring is read again from
// its file (a new active key re-seals cookies; a retired key still opens until it leaves the
// ring), a broken key file keeps the previous ring, the log says what was reloaded, and the
// server keeps serving throughout. The click-token key ring reloads the same way.
#include <gtest/gtest.h>

#include <signal.h>
#include <strings.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "integration/fixture.h"
#include "support/temp_dir.h"

namespace adserver::testing {
namespace {

using nlohmann::json;

const std::string kKeyA = "1:" + std::string(64, 'a');
const std::string kKeyB = "2:" + std::string(64, 'b');

std::string CookieValue(const HttpResult& r) {
  for (const auto& [name, value] : r.headers) {
    if (strcasecmp(name.c_str(), "set-cookie") == 0 && value.starts_with("adserver_id=")) {
      return value.substr(12, value.find(';') - 12);
    }
  }
  return "";
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class ReloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    keys_ = dir_.File("identity.keys");
    WriteKeys(kKeyA);
    std::ofstream(dir_.File("adserver.toml")) << "[identity]\nkeys_file = \"" << keys_ << "\"\n";
    ServerProcess::Options options;
    options.extra_args = {"--config", dir_.File("adserver.toml")};
    options.log_level = "info";  // the reload's log line is at info
    fixture_ = std::make_unique<ServingFixture>(options);
    ASSERT_TRUE(fixture_->ok()) << fixture_->error();
  }
  void WriteKeys(const std::string& text) { std::ofstream(keys_, std::ios::trunc) << text << "\n"; }
  // Sends SIGHUP and waits until the log shows the n-th reload (or failed one).
  void Hup(size_t n, const std::string& marker = "reloaded on SIGHUP") {
    fixture_->server().Signal(SIGHUP);
    for (int i = 0; i < 200 && Count(fixture_->server().Output(), marker) < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    ASSERT_EQ(Count(fixture_->server().Output(), marker), n) << fixture_->server().Output();
  }
  HttpResult Consented(const std::string& cookie, bool with_wallet) {
    json body = {{"imageFormat", "LANDSCAPE"}, {"cookieConsent", true}};
    body["walletAddresses"] = with_wallet ? json::array({fixture_->wallets.uniswap}) : json::array();
    HttpHeaders headers = {{"Content-Type", "application/json"},
                           {"x-api-key", fixture_->keys.open_live}};
    if (!cookie.empty()) headers.emplace_back("Cookie", "adserver_id=" + cookie);
    return fixture_->Client().Send("POST", "/v1/ads", headers, body.dump());
  }

  TempDir dir_;
  std::string keys_;
  std::unique_ptr<ServingFixture> fixture_;
};

TEST_F(ReloadTest, SighupReloadsTheIdentityKeyRing) {
  const std::string under_a = CookieValue(Consented("", true));
  ASSERT_FALSE(under_a.empty());
  EXPECT_EQ(Consented(under_a, false).status, 200);  // served from the cookie's wallet

  // Rotation: B seals, A still opens; a cookie under A is sealed again under B.
  WriteKeys(kKeyB + "\n" + kKeyA);
  Hup(1);
  EXPECT_NE(fixture_->server().Output().find("identity_keys=2 (active 2)"), std::string::npos)
      << fixture_->server().Output();
  HttpResult rotated = Consented(under_a, false);
  EXPECT_EQ(rotated.status, 200) << rotated.body;
  const std::string under_b = CookieValue(rotated);
  ASSERT_FALSE(under_b.empty()) << "a cookie of the retired key is sealed again";
  EXPECT_NE(under_b, under_a);

  // A broken file keeps the ring in use; the rest (the log level) is still reloaded, and both
  // are logged.
  WriteKeys("not a key");
  Hup(1, "reload incomplete");
  EXPECT_EQ(Count(fixture_->server().Output(), "reloaded on SIGHUP"), 2u);
  EXPECT_EQ(Consented(under_a, false).status, 200);

  // A leaves the ring: its cookies are no identity any more (204), B's still are.
  WriteKeys(kKeyB);
  Hup(3);
  EXPECT_EQ(Consented(under_a, false).status, 204);
  EXPECT_EQ(Consented(under_b, false).status, 200);
}

// The click-token key ring (events.keys) reloads the same way: a token sealed under a key that
// left the ring no longer opens (400), tokens of the new active key do.
TEST(ClickKeysReloadTest, SighupReloadsTheClickKeyRing) {
  TempDir dir;
  const std::string keys = dir.File("events.keys");
  auto write_keys = [&](const std::string& text) {
    std::ofstream(keys, std::ios::trunc) << text << "\n";
  };
  write_keys(kKeyA);
  std::ofstream(dir.File("adserver.toml"))
      << "[events]\nkeys_file = \"" << keys << "\"\n" << kTrafficChecksOff;
  ServerProcess::Options options;
  options.extra_args = {"--config", dir.File("adserver.toml")};
  options.log_level = "info";
  ServingFixture f(options);
  ASSERT_TRUE(f.ok()) << f.error();
  // The click path of a fresh ad's ctaUrl.
  auto click_path = [&] {
    json body = {{"imageFormat", "LANDSCAPE"}, {"walletAddresses", {f.wallets.uniswap}}};
    HttpResult r = f.Client().Send(
        "POST", "/v1/ads", {{"Content-Type", "application/json"}, {"x-api-key", f.keys.open_live}},
        body.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    std::string url = r.status == 200 ? json::parse(r.body).value("ctaUrl", "") : "";
    size_t at = url.find("/v1/click/");
    return at == std::string::npos ? std::string() : url.substr(at);
  };
  auto click = [&](const std::string& path) { return f.Client().Send("GET", path, {}).status; };
  auto hup = [&](size_t n) {
    f.server().Signal(SIGHUP);
    for (int i = 0; i < 200 && Count(f.server().Output(), "reloaded on SIGHUP") < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    ASSERT_EQ(Count(f.server().Output(), "reloaded on SIGHUP"), n) << f.server().Output();
  };

  const std::string under_a = click_path();
  ASSERT_FALSE(under_a.empty());
  EXPECT_EQ(click(under_a), 302);
  write_keys(kKeyB + "\n" + kKeyA);
  hup(1);
  EXPECT_NE(f.server().Output().find("click_keys=2 (active 2)"), std::string::npos)
      << f.server().Output();
  const std::string under_b = click_path();
  ASSERT_FALSE(under_b.empty());
  EXPECT_EQ(click(under_a), 302);  // the retired key still opens
  EXPECT_EQ(click(under_b), 302);
  write_keys(kKeyB);
  hup(2);
  EXPECT_EQ(click(under_a), 400);  // A left the ring
  EXPECT_EQ(click(under_b), 302);  // so B sealed the second token
}

}  // namespace
}  // namespace adserver::testing
