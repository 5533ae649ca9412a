#include "serve/events_handler.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/crypto.h"
#include "serve/identity_binding.h"

namespace adserver::serve {
namespace {

constexpr int64_t kNow = 1'767'225'600;
const std::string kLiveKey = "sak_" + std::string(30, 'L');
const std::string kTestKey = "sak_" + std::string(30, 'T');
const std::string kRevokedKey = "sak_" + std::string(30, 'R');  // not in the catalog
const std::string kPublisherKey = "spk_" + std::string(30, 'P');
const std::string kWallet = "0x" + std::string(40, 'a');

// Records what the handler stores; linking to clicks is the SQLite adapter's (tested there).
class RecordingStore final : public store::AdvertiserEventsStore {
 public:
  Status Insert(store::AdvertiserEventRecord& event) override {
    if (fail) return UnavailableError("down");
    event.id = static_cast<store::Id>(rows.size() + 1);
    rows.push_back(event);
    return OkStatus();
  }
  Result<std::vector<store::AdvertiserEventRecord>> List(
      const store::AdvertiserEventQuery&) override {
    return rows;
  }
  Result<std::vector<store::AdvertiserEventCount>> Counts(std::optional<store::Id>,
                                                          std::optional<store::Id>) override {
    return std::vector<store::AdvertiserEventCount>{};
  }
  Result<std::vector<store::AdvertiserEventCount>> InvalidCounts(
      std::optional<store::Id>, std::optional<store::Id>) override {
    return std::vector<store::AdvertiserEventCount>{};
  }
  Result<int64_t> Prune(int64_t before) override {
    prunes.push_back(before);
    return 0;
  }
  std::vector<store::AdvertiserEventRecord> rows;
  std::vector<int64_t> prunes;
  bool fail = false;
};

class EventsHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto catalog = std::make_shared<decision::Catalog>();
    catalog->publishers.push_back({.id = 1, .name = "news"});
    catalog->api_keys.push_back({.id = 1, .publisher = 0, .hash = Sha256(kPublisherKey)});
    catalog->advertiser_keys.push_back(
        {.id = 5, .community_id = 9, .hash = Sha256(kLiveKey), .test = false});
    catalog->advertiser_keys.push_back(
        {.id = 6, .community_id = 9, .hash = Sha256(kTestKey), .test = true});
    catalog->BuildIndexes();
    catalogs_.Publish(catalog);
    identity::IdentityOptions options;
    options.keys = "1:" + std::string(64, 'a');
    clock_.SetMicros(kNow * 1'000'000);
    identity_ = std::move(*identity::IdentityService::Create(nullptr, clock_, options));
    handler_ = std::make_unique<EventsHandler>(
        catalogs_, log_,
        [](std::span<const Address> wallets) { return uint64_t{1000} + wallets.size(); }, clock_,
        identity_.get());
  }

  http::Response Post(const std::string& body, const std::string& key = kLiveKey,
                      std::vector<http::Header> extra = {}) {
    body_ = body;
    key_ = key;
    http::Request r;
    r.method = http::Method::kPost;
    r.path = "/v1/events";
    r.body = body_;
    if (!key_.empty()) r.headers.push_back({"x-api-key", key_});
    r.headers.push_back({"Content-Type", "application/json"});
    for (http::Header& h : extra) r.headers.push_back(std::move(h));
    return handler_->Handle(r);
  }
  static std::string Body(std::string name, std::string extra = "") {
    return R"({"event":{"name":")" + name + R"("},"walletAddresses":[")" + kWallet + "\"]" + extra +
           "}";
  }

  FakeClock clock_;
  Published<decision::Catalog> catalogs_;
  RecordingStore store_;
  events::AdvertiserEventLog log_{store_, store_};
  std::unique_ptr<identity::IdentityService> identity_;
  std::unique_ptr<EventsHandler> handler_;
  std::string body_, key_;
};

TEST_F(EventsHandlerTest, StoresAValidEventAndAnswersSuccess) {
  http::Response r =
      Post(R"({"cookieConsent":false,"event":{"name":"sign_up","url":"https://shop.example/x"},)"
           R"("walletAddresses":[")" +
           kWallet + R"(","0x)" + std::string(40, 'A') + R"("]})");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, R"({"success":true})");
  ASSERT_EQ(store_.rows.size(), 1u);
  const store::AdvertiserEventRecord& row = store_.rows[0];
  EXPECT_EQ(row.name, "sign_up");
  EXPECT_EQ(row.url, "https://shop.example/x");
  EXPECT_EQ(row.community_id, 9);
  EXPECT_EQ(row.key_id, 5);
  EXPECT_EQ(row.person, 1001u);  // the two spellings are one wallet
  EXPECT_EQ(row.created_at, kNow);
  EXPECT_FALSE(row.decision_id.has_value());
}

TEST_F(EventsHandlerTest, RejectsMissingMalformedPublisherAndUnknownKeysWith401) {
  for (const std::string& key :
       {std::string(), std::string("sak_short"), kPublisherKey, kRevokedKey}) {
    http::Response r = Post(Body("x"), key);
    EXPECT_EQ(r.status, 401) << key;
    EXPECT_NE(r.body.find(R"("success":false)"), std::string::npos) << r.body;
    EXPECT_NE(r.body.find(R"("error":"Invalid or missing API key")"), std::string::npos);
    EXPECT_NE(r.body.find(R"("field":"x-api-key")"), std::string::npos);
  }
  EXPECT_TRUE(store_.rows.empty());
}

// Issue 37: any non-empty UTF-8 name of at most 256 bytes without control characters, stored
// exactly as sent (the names real SDKs send: hyphens, dots, spaces, capitals, non-ASCII).
TEST_F(EventsHandlerTest, AcceptsTheNamesSdksSendAndRefusesEmptyLongOrControl) {
  const std::vector<std::string> good = {
      "first-visit", "checkout.completed", "Sign Up", "café_ouvert", "注册",
      "🚀 launch",    std::string(256, 'a')};
  for (const std::string& name : good) {
    EXPECT_EQ(Post(Body(name)).status, 200) << name;
    ASSERT_FALSE(store_.rows.empty());
    EXPECT_EQ(store_.rows.back().name, name);
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "event.name must not be empty"},
      {std::string(257, 'a'), "event.name must be at most 256 bytes"},
      {"a\\u0001b", "event.name must not contain control characters"},
      {"tab\\there", "event.name must not contain control characters"},
      {"del\\u007f", "event.name must not contain control characters"},
      {"c1\\u0085", "event.name must not contain control characters"}};
  for (const auto& [name, message] : bad) {
    http::Response r = Post(Body(name));
    EXPECT_EQ(r.status, 400) << name;
    EXPECT_NE(r.body.find(R"("field":"event.name")"), std::string::npos) << r.body;
    EXPECT_NE(r.body.find(message), std::string::npos) << r.body;
  }
  EXPECT_EQ(Post(R"({"event":{"name":7},"walletAddresses":[")" + kWallet + "\"]}").status, 400);
}

TEST_F(EventsHandlerTest, RejectsMissingEventBadUrlAndBadConsent) {
  EXPECT_EQ(Post(R"({"walletAddresses":[")" + kWallet + "\"]}").status, 400);
  http::Response url =
      Post(R"({"event":{"name":"a","url":7},"walletAddresses":[")" + kWallet + "\"]}");
  EXPECT_EQ(url.status, 400);
  EXPECT_NE(url.body.find(R"("field":"event.url")"), std::string::npos);
  std::string long_url = "https://x/" + std::string(2040, 'a');
  EXPECT_EQ(Post(R"({"event":{"name":"a","url":")" + long_url + R"("},"walletAddresses":[")" +
                 kWallet + "\"]}")
                .status,
            400);
  http::Response consent = Post(Body("a", R"(,"cookieConsent":"yes")"));
  EXPECT_EQ(consent.status, 400);
  EXPECT_NE(consent.body.find(R"("field":"cookieConsent")"), std::string::npos);
  EXPECT_EQ(Post("not json").status, 400);
  EXPECT_EQ(Post("[]").status, 400);
  EXPECT_TRUE(store_.rows.empty());
}

TEST_F(EventsHandlerTest, RejectsInvalidAndTooManyWallets) {
  http::Response bad = Post(R"({"event":{"name":"a"},"walletAddresses":["0x12"]})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("walletAddresses[0] is not a valid EVM address"), std::string::npos);
  std::string wallets;
  for (int i = 0; i < 51; ++i) {
    char hex[41];
    std::snprintf(hex, sizeof hex, "%040x", i + 1);
    wallets += std::string(i ? "," : "") + "\"0x" + hex + "\"";
  }
  http::Response many = Post(R"({"event":{"name":"a"},"walletAddresses":[)" + wallets + "]}");
  EXPECT_EQ(many.status, 400);
  EXPECT_NE(many.body.find("at most 50 distinct addresses"), std::string::npos);
  // 50 distinct plus a repeat in another case is fine.
  std::string fifty = wallets.substr(0, wallets.rfind(','));
  EXPECT_EQ(Post(R"({"event":{"name":"a"},"walletAddresses":[)" + fifty + R"(,"0x)" +
                 std::string(39, '0') + "1\"]}")
                .status,
            200);
}

TEST_F(EventsHandlerTest, NoWalletsAndNoCookieIsNoIdentity) {
  for (std::string body : {std::string(R"({"event":{"name":"a"}})"),
                           std::string(R"({"event":{"name":"a"},"walletAddresses":[]})"),
                           std::string(R"({"event":{"name":"a"},"cookieConsent":true})")}) {
    http::Response r = Post(body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_NE(r.body.find(R"("error":"No user identity is available")"), std::string::npos);
  }
}

TEST_F(EventsHandlerTest, TheIdentityCookieIsThePersonOnlyWithConsent) {
  // A cookie as /v1/ads sets it for a consented visitor with one wallet.
  AdRequest ad;
  ad.variant = Variant::kCurrent;
  ad.wallets = {*ParseAddress(kWallet)};
  ad.cookie_consent = true;
  IdentityOutcome set = ResolveIdentity(identity_.get(), http::Request{}, ad, false, kNow);
  ASSERT_FALSE(set.set_cookies.empty());
  const std::string& c = set.set_cookies[0];
  std::string cookie = c.substr(0, c.find(';'));

  http::Response without = Post(R"({"event":{"name":"a"}})", kLiveKey, {{"Cookie", cookie}});
  EXPECT_EQ(without.status, 400);
  http::Response with =
      Post(R"({"event":{"name":"a"},"cookieConsent":true})", kLiveKey, {{"Cookie", cookie}});
  EXPECT_EQ(with.status, 200) << with.body;
  ASSERT_EQ(store_.rows.size(), 1u);
  EXPECT_EQ(store_.rows[0].person, 1001u);
  EXPECT_FALSE(with.HasHeader("Set-Cookie"));
  http::Response forged = Post(R"({"event":{"name":"a"},"cookieConsent":true})", kLiveKey,
                               {{"Cookie", identity_->options().cookie_name + "=junk"}});
  EXPECT_EQ(forged.status, 400);
}

TEST_F(EventsHandlerTest, TestKeysAreValidatedButWriteNothing) {
  EXPECT_EQ(Post(Body("purchase"), kTestKey).status, 200);
  EXPECT_EQ(Post(Body(""), kTestKey).status, 400);
  EXPECT_TRUE(store_.rows.empty());
}

TEST_F(EventsHandlerTest, SpclidInTheUrlIsStoredAsTheDecisionId) {
  std::string url = "https://shop.example/p?utm=1&spclid=0193A5C2-7F1E-7C3A-9B2D-4E5F6A7B8C9D#top";
  EXPECT_EQ(Post(R"({"event":{"name":"a","url":")" + url + R"("},"walletAddresses":[")" + kWallet +
                 "\"]}")
                .status,
            200);
  ASSERT_EQ(store_.rows.size(), 1u);
  ASSERT_TRUE(store_.rows[0].decision_id.has_value());
  EXPECT_EQ((*store_.rows[0].decision_id)[0], 0x01);
  EXPECT_EQ((*store_.rows[0].decision_id)[15], 0x9d);
  EXPECT_FALSE(SpclidOf("https://shop.example/p?spclid=nope").has_value());
  EXPECT_FALSE(
      SpclidOf("https://shop.example/p#spclid=0193a5c2-7f1e-7c3a-9b2d-4e5f6a7b8c9d").has_value());
  EXPECT_FALSE(
      SpclidOf("https://shop.example/p?xspclid=0193a5c2-7f1e-7c3a-9b2d-4e5f6a7b8c9d").has_value());
}

TEST_F(EventsHandlerTest, AnswersCredentialedCorsAndPreflight) {
  http::Response r = Post(Body("a"), kLiveKey, {{"Origin", "https://shop.example"}});
  EXPECT_EQ(r.Header("Access-Control-Allow-Origin"), "https://shop.example");
  EXPECT_EQ(r.Header("Access-Control-Allow-Credentials"), "true");
  EXPECT_EQ(r.Header("Vary"), "Origin");
  http::Response denied = Post(Body("a"), kPublisherKey, {{"Origin", "https://shop.example"}});
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(denied.Header("Access-Control-Allow-Origin"), "https://shop.example");

  http::Request preflight;
  preflight.method = http::Method::kOptions;
  preflight.headers.push_back({"Origin", "https://shop.example"});
  http::Response p = handler_->Preflight(preflight);
  EXPECT_EQ(p.status, 204);
  EXPECT_EQ(p.Header("Access-Control-Allow-Origin"), "https://shop.example");
  EXPECT_EQ(p.Header("Access-Control-Allow-Credentials"), "true");
  EXPECT_EQ(p.Header("Access-Control-Allow-Methods"), "POST");
  EXPECT_EQ(p.Header("Access-Control-Allow-Headers"), "content-type, x-api-key");
  EXPECT_EQ(p.Header("Vary"), "Origin");
}

TEST_F(EventsHandlerTest, StoreFailureIs503AndPruningRunsOncePerInterval) {
  store_.fail = true;
  http::Response down = Post(Body("a"));
  EXPECT_EQ(down.status, 503);
  EXPECT_EQ(down.Header("Retry-After"), "1");
  store_.fail = false;
  EXPECT_EQ(Post(Body("a")).status, 200);
  EXPECT_EQ(Post(Body("a")).status, 200);
  ASSERT_EQ(store_.prunes.size(), 1u);
  EXPECT_EQ(store_.prunes[0], kNow - 90 * 86400);
  clock_.Advance(std::chrono::hours(1));
  EXPECT_EQ(Post(Body("a")).status, 200);
  EXPECT_EQ(store_.prunes.size(), 2u);
}

TEST_F(EventsHandlerTest, NonJsonContentTypeIs400) {
  body_ = Body("a");
  key_ = kLiveKey;
  http::Request r;
  r.method = http::Method::kPost;
  r.body = body_;
  r.headers = {{"x-api-key", key_}, {"Content-Type", "text/plain"}};
  http::Response response = handler_->Handle(r);
  EXPECT_EQ(response.status, 400);
  EXPECT_NE(response.body.find(R"("field":"Content-Type")"), std::string::npos);
}


// With the invalid-traffic checks (issue 18): an invalid event is answered 200 like any other
// and stored with its reason (the store counts it apart).
TEST_F(EventsHandlerTest, InvalidEventsAreAnsweredAsUsualAndStoredWithTheirReason) {
  events::TrafficOptions options;
  options.event_limits = {{60, 1}};
  events::TrafficChecks checks(options, events::CrawlerMatcher::Builtin(), nullptr);
  Result<http::TrustedProxies> proxies = http::TrustedProxies::Parse({"10.0.0.0/8"});
  ASSERT_TRUE(proxies.ok());
  EventsHandler handler(
      catalogs_, log_, [](std::span<const Address>) { return uint64_t{1000}; }, clock_,
      nullptr, AdvertiserEventsOptions{}, TrafficGuard{.checks = &checks, .proxies = &*proxies});
  auto post = [&](std::string_view user_agent, std::string_view forwarded_for) {
    body_ = Body("sign_up");
    http::Request r;
    r.method = http::Method::kPost;
    r.path = "/v1/events";
    r.body = body_;
    r.remote_ip = "10.0.0.1";
    r.headers = {{"x-api-key", kLiveKey}, {"Content-Type", "application/json"}};
    if (!user_agent.empty()) r.headers.push_back({"User-Agent", user_agent});
    r.headers.push_back({"X-Forwarded-For", forwarded_for});
    return handler.Handle(r);
  };
  const char* browser = "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0";
  for (auto [agent, ip] : {std::pair{"", "198.51.100.1"},
                           std::pair{"Mozilla/5.0 (compatible; bingbot/2.0)", "198.51.100.1"},
                           std::pair{browser, "198.51.100.1"},
                           std::pair{browser, "198.51.100.2"},  // the same /24
                           std::pair{browser, "192.0.2.1"}}) {  // the same person
    http::Response r = post(agent, ip);
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.body, R"({"success":true})");
  }
  ASSERT_EQ(store_.rows.size(), 5u);
  std::vector<std::string> reasons;
  for (const store::AdvertiserEventRecord& row : store_.rows) reasons.push_back(row.invalid_reason);
  EXPECT_EQ(reasons, (std::vector<std::string>{"missing_user_agent", "crawler", "",
                                               "ip_rate_limit", "person_rate_limit"}));
}

}  // namespace
}  // namespace adserver::serve
