// Conformance table: every rule of ad-serving-api.md (sections 2, 4, 5, 7, 8) and
// compatibility.md, checked against the real binary over real HTTP. Each row names the rule it
// covers; a row fails if the server breaks that rule.

#include <gtest/gtest.h>

#include <cctype>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "integration/fixture.h"

namespace adserver::testing {
namespace {

using nlohmann::json;

ServingFixture* fixture = nullptr;
// Click URLs in live keys' ads start with this (http.public_url).
constexpr const char* kPublicUrl = "https://ads.example.test";

class ConformanceEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ServerProcess::Options options;
    options.env["ADSERVER_PUBLIC_URL"] = kPublicUrl;
    fixture = new ServingFixture(options);
  }
  void TearDown() override {
    delete fixture;
    fixture = nullptr;
  }
};

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new ConformanceEnvironment);

enum class KeyKind { kNone, kOpen, kTest, kRevoked, kStrict, kBlocking, kLiteral };

struct Case {
  std::string rule;  // what the row checks (spec section or compatibility note)
  std::string method = "POST";
  std::string path = "/v1/ads";
  KeyKind key = KeyKind::kOpen;
  std::string literal_key;  // for KeyKind::kLiteral
  std::string content_type = "application/json";
  std::optional<std::string> origin;
  // Body: a JSON value, or raw text when raw_body is set.
  json body = json::object();
  std::optional<std::string> raw_body;
  int status = 200;
  // For 400s: fields that must appear in details[] (and nothing else when exact_details).
  std::vector<std::string> detail_fields;
  bool exact_details = false;
  // Fields whose values must match in a 200 (or 404) body.
  json expect_fields = json::object();
  // Exact set of keys of a 200 body (empty = don't check).
  std::set<std::string> exact_keys;
  std::vector<std::pair<std::string, std::string>> expect_headers;
  std::vector<std::string> absent_headers;
  // Extra check on the parsed response.
  std::function<void(const HttpResult&)> check;
};

const std::set<std::string> kCurrentKeys = {"campaignId", "adId", "headline", "content", "ctaUrl",
                                            "ctaLabel", "imageUrl", "communityName",
                                            "communityLogo", "imageFormat"};
const std::set<std::string> kEarlierKeys = {"walletAddress", "campaignId", "adId", "headline",
                                            "content", "ctaUrl", "ctaLabel", "imageUrl",
                                            "communityName", "communityLogo", "imageFormat"};

std::string KeyFor(const Case& c) {
  switch (c.key) {
    case KeyKind::kNone: return "";
    case KeyKind::kOpen: return fixture->keys.open_live;
    case KeyKind::kTest: return fixture->keys.open_test;
    case KeyKind::kRevoked: return fixture->keys.revoked;
    case KeyKind::kStrict: return fixture->keys.strict;
    case KeyKind::kBlocking: return fixture->keys.blocking;
    case KeyKind::kLiteral: return c.literal_key;
  }
  return "";
}

std::vector<Case> Cases();  // the table, at the end of this file

class ConformanceTest : public ::testing::TestWithParam<size_t> {};

TEST_P(ConformanceTest, Row) {
  ASSERT_NE(fixture, nullptr);
  ASSERT_TRUE(fixture->ok()) << fixture->error();
  static const std::vector<Case> cases = Cases();
  const Case& c = cases[GetParam()];
  SCOPED_TRACE(c.rule);
  std::vector<std::pair<std::string, std::string>> headers;
  if (c.key != KeyKind::kNone) headers.emplace_back("x-api-key", KeyFor(c));
  if (!c.content_type.empty()) headers.emplace_back("Content-Type", c.content_type);
  if (c.origin) headers.emplace_back("Origin", *c.origin);
  std::string body = c.raw_body ? *c.raw_body : (c.method == "POST" ? c.body.dump() : "");
  HttpClient client = fixture->Client();
  HttpResult r = client.Send(c.method, c.path, headers, body);
  ASSERT_EQ(r.status, c.status) << c.rule << "\nbody: " << r.body;

  // Spec 4/7: every 4xx/5xx has the error body of 2.6.
  if (r.status >= 400) {
    json e = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(e.is_object()) << r.body;
    EXPECT_TRUE(e.contains("error") && e["error"].is_string()) << r.body;
    ASSERT_TRUE(e.contains("details") && e["details"].is_array()) << r.body;
    std::set<std::string> fields;
    for (const json& d : e["details"]) {
      EXPECT_TRUE(d.contains("field") && d["field"].is_string()) << r.body;
      EXPECT_TRUE(d.contains("message") && d["message"].is_string()) << r.body;
      fields.insert(d.value("field", ""));
    }
    for (const std::string& f : c.detail_fields) EXPECT_TRUE(fields.count(f)) << f << " in " << r.body;
    if (c.exact_details) {
      EXPECT_EQ(fields.size(), c.detail_fields.size()) << r.body;
    }
    EXPECT_EQ(r.Header("Content-Type").substr(0, 16), "application/json");
  }
  if (r.status == 200 && c.method == "POST") {
    json b = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(b.is_object()) << r.body;
    if (!c.exact_keys.empty()) {
      std::set<std::string> keys;
      for (auto it = b.begin(); it != b.end(); ++it) keys.insert(it.key());
      EXPECT_EQ(keys, c.exact_keys) << r.body;
    }
  }
  if (!c.expect_fields.empty()) {
    json b = json::parse(r.body, nullptr, false);
    for (auto it = c.expect_fields.begin(); it != c.expect_fields.end(); ++it) {
      EXPECT_EQ(b.value(it.key(), json("<absent>")), it.value()) << it.key() << " in " << r.body;
    }
  }
  // Content-Length is always exact (the client reads exactly that many bytes).
  if (r.HasHeader("Content-Length")) {
    EXPECT_EQ(r.Header("Content-Length"), std::to_string(r.body.size()));
  }
  for (const auto& [name, value] : c.expect_headers) EXPECT_EQ(r.Header(name), value) << name;
  for (const std::string& name : c.absent_headers) EXPECT_FALSE(r.HasHeader(name)) << name;
  if (c.check) c.check(r);
}

// Test name: row number plus the rule text reduced to [A-Za-z0-9_].
std::string Rule(size_t i) {
  static const std::vector<Case> cases = Cases();
  // Built with append: GCC 12 reports a false -Wrestrict on "r" + std::to_string(i).
  std::string name(1, 'r');
  name.append(std::to_string(i));
  name.push_back('_');
  for (char ch : cases[i].rule) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      name += ch;
    } else if (name.back() != '_') {
      name += '_';
    }
  }
  while (name.back() == '_') name.pop_back();
  return name;
}

INSTANTIATE_TEST_SUITE_P(Spec, ConformanceTest, ::testing::Range<size_t>(0, Cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) { return Rule(info.param); });


// ---------------------------------------------------------------------------------------------
// The table.

const FixtureWallets kW;

json Req(std::vector<std::string> wallets, const std::string& format = "LANDSCAPE") {
  return json{{"walletAddresses", wallets}, {"imageFormat", format}};
}

std::string Upper(std::string s) {
  for (size_t i = 2; i < s.size(); ++i) s[i] = static_cast<char>(std::toupper(s[i]));
  return s;
}

std::vector<std::string> DistinctWallets(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    char buf[43];
    std::snprintf(buf, sizeof buf, "0x%040x", 0xabc000 + i);
    out.push_back(buf);
  }
  return out;
}

void ExpectCampaign(const HttpResult& r, int64_t campaign) {
  json b = json::parse(r.body);
  EXPECT_EQ(b.value("campaignId", ""), std::to_string(campaign)) << r.body;
}

std::vector<Case> Cases() {
  std::vector<Case> t;
  auto add = [&](Case c) { t.push_back(std::move(c)); };
  const std::string kEarlier = "/api/ads";

  // --- 4. Endpoints, methods and paths -----------------------------------------------------
  add({.rule = "4: POST /v1/ads with a matching wallet returns 200 and one ad",
       .body = Req({kW.uniswap}), .exact_keys = kCurrentKeys,
       .check = [](const HttpResult& r) { ExpectCampaign(r, fixture->aave_campaign); }});
  add({.rule = "4: POST /api/ads with a matching wallet returns 200 and one ad", .path = kEarlier,
       .body = Req({kW.uniswap}), .exact_keys = kEarlierKeys,
       .check = [](const HttpResult& r) { ExpectCampaign(r, fixture->aave_campaign); }});
  add({.rule = "router: GET /v1/ads is 405 with the error body", .method = "GET", .status = 405});
  add({.rule = "router: GET /api/ads is 405 with the error body", .method = "GET", .path = kEarlier,
       .status = 405});
  add({.rule = "router: PUT /v1/ads is 405", .method = "PUT", .status = 405});
  add({.rule = "router: DELETE /api/ads is 405", .method = "DELETE", .path = kEarlier, .status = 405});
  add({.rule = "router: unknown path is 404 with the error body", .path = "/v2/ads", .status = 404});
  add({.rule = "router: /v1/ads/ (trailing slash) is not the endpoint", .path = "/v1/ads/x",
       .status = 404});
  add({.rule = "router: query string does not change the route", .path = "/v1/ads?x=1",
       .body = Req({kW.uniswap})});

  // --- 5. Authentication --------------------------------------------------------------------
  for (const std::string& path : {std::string("/v1/ads"), kEarlier}) {
    bool cur = path == "/v1/ads";
    std::string msg = cur ? "Invalid or missing API key" : "Invalid API key";
    add({.rule = "5.4: missing key is 401 (" + path + ")", .path = path, .key = KeyKind::kNone,
         .body = Req({kW.uniswap}), .status = 401, .expect_fields = {{"error", msg}}});
    add({.rule = "5.2: key without spk_ prefix is 401 (" + path + ")", .path = path,
         .key = KeyKind::kLiteral, .literal_key = "pk_123456789012345678901234567890ab",
         .body = Req({kW.uniswap}), .status = 401, .expect_fields = {{"error", msg}}});
    add({.rule = "5.2: 33-character key is 401 (" + path + ")", .path = path,
         .key = KeyKind::kLiteral, .literal_key = "spk_12345678901234567890123456789",
         .body = Req({kW.uniswap}), .status = 401});
    add({.rule = "5.2: 35-character key is 401 (" + path + ")", .path = path,
         .key = KeyKind::kLiteral, .literal_key = "spk_1234567890123456789012345678901",
         .body = Req({kW.uniswap}), .status = 401});
    add({.rule = "compat keys: non-alphanumeric key is 401 (" + path + ")", .path = path,
         .key = KeyKind::kLiteral, .literal_key = "spk_12345678901234567890123456789-",
         .body = Req({kW.uniswap}), .status = 401});
    add({.rule = "5.4: well-formed unknown key is 401 (" + path + ")", .path = path,
         .key = KeyKind::kLiteral, .literal_key = "spk_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123",
         .body = Req({kW.uniswap}), .status = 401});
    add({.rule = "compat: revoked key is 401 (" + path + ")", .path = path,
         .key = KeyKind::kRevoked, .body = Req({kW.uniswap}), .status = 401,
         .expect_fields = {{"error", msg}}});
    add({.rule = "5.4: 401 comes before body validation (" + path + ")", .path = path,
         .key = KeyKind::kNone, .raw_body = "{not json", .status = 401});
  }

  // --- 5.3 Content-Type -----------------------------------------------------------------------
  add({.rule = "5.3: missing Content-Type is 400", .content_type = "", .body = Req({kW.uniswap}),
       .status = 400, .detail_fields = {"Content-Type"}});
  add({.rule = "5.3: text/plain is 400", .content_type = "text/plain", .body = Req({kW.uniswap}),
       .status = 400, .detail_fields = {"Content-Type"}});
  add({.rule = "5.3: form encoding is 400 (earlier)", .path = kEarlier,
       .content_type = "application/x-www-form-urlencoded", .body = Req({kW.uniswap}),
       .status = 400, .detail_fields = {"Content-Type"}});
  add({.rule = "5.3: charset parameter is accepted", .content_type = "application/json; charset=utf-8",
       .body = Req({kW.uniswap})});
  add({.rule = "5.3: media type is case-insensitive", .content_type = "Application/JSON",
       .body = Req({kW.uniswap})});

  // --- JSON parsing ------------------------------------------------------------------------------
  for (const std::string& path : {std::string("/v1/ads"), kEarlier}) {
    add({.rule = "2.6: malformed JSON is 400 naming body (" + path + ")", .path = path,
         .raw_body = "{\"walletAddresses\": [", .status = 400, .detail_fields = {"body"}});
    add({.rule = "2.6: empty body is 400 (" + path + ")", .path = path, .raw_body = "",
         .status = 400, .detail_fields = {"body"}});
    add({.rule = "2.1: a JSON array body is 400 (" + path + ")", .path = path,
         .raw_body = "[1,2]", .status = 400, .detail_fields = {"body"}});
    add({.rule = "2.1: a JSON string body is 400 (" + path + ")", .path = path,
         .raw_body = "\"hello\"", .status = 400, .detail_fields = {"body"}});
    add({.rule = "2.1: trailing garbage after the object is 400 (" + path + ")", .path = path,
         .raw_body = Req({kW.uniswap}).dump() + " x", .status = 400, .detail_fields = {"body"}});
  }

  // --- 2.1 / 2.4 walletAddresses ---------------------------------------------------------------
  for (const std::string& path : {std::string("/v1/ads"), kEarlier}) {
    add({.rule = "2.1: walletAddresses as a string is 400 (" + path + ")", .path = path,
         .body = {{"walletAddresses", kW.uniswap}, {"imageFormat", "LANDSCAPE"}}, .status = 400,
         .detail_fields = {"walletAddresses"}, .exact_details = true});
    add({.rule = "2.1: a non-string element is 400 naming its index (" + path + ")", .path = path,
         .body = {{"walletAddresses", {kW.uniswap, 42}}, {"imageFormat", "LANDSCAPE"}},
         .status = 400, .detail_fields = {"walletAddresses[1]"}, .exact_details = true});
    add({.rule = "2.4: invalid address at index 3 is named walletAddresses[3] (" + path + ")",
         .path = path,
         .body = Req({kW.uniswap, kW.aave, kW.unknown, "0x123"}), .status = 400,
         .detail_fields = {"walletAddresses[3]"}, .exact_details = true});
    add({.rule = "2.4.2: missing 0x prefix is 400 (" + path + ")", .path = path,
         .body = Req({kW.uniswap.substr(2) + "00"}), .status = 400,
         .detail_fields = {"walletAddresses[0]"}});
    add({.rule = "2.4.2: 0X (capital X) prefix is 400 (" + path + ")", .path = path,
         .body = Req({"0X" + kW.uniswap.substr(2)}), .status = 400,
         .detail_fields = {"walletAddresses[0]"}});
    add({.rule = "2.4.2: 39 hex characters is 400 (" + path + ")", .path = path,
         .body = Req({kW.uniswap.substr(0, 41)}), .status = 400,
         .detail_fields = {"walletAddresses[0]"}});
    add({.rule = "2.4.2: 41 hex characters is 400 (" + path + ")", .path = path,
         .body = Req({kW.uniswap + "1"}), .status = 400, .detail_fields = {"walletAddresses[0]"}});
    add({.rule = "2.4.2: non-hex character is 400 (" + path + ")", .path = path,
         .body = Req({"0x111111111111111111111111111111111111111g"}), .status = 400,
         .detail_fields = {"walletAddresses[0]"}});
    add({.rule = "2.4.3: upper-case hex letters match (" + path + ")", .path = path,
         .body = Req({Upper("0xabcdef1111111111111111111111111111111111"), kW.uniswap}),
         .check = [](const HttpResult& r) { ExpectCampaign(r, fixture->aave_campaign); }});
    add({.rule = "2.4.4/8: 51 distinct addresses is 400 (" + path + ")", .path = path,
         .body = Req(DistinctWallets(51)), .status = 400, .detail_fields = {"walletAddresses"},
         .exact_details = true});
    {
      // 50 distinct + the same 50 in upper case + one matching wallet = 51 distinct.
      std::vector<std::string> w = DistinctWallets(49);
      w.push_back(kW.uniswap);
      for (int i = 0; i < 49; ++i) w.push_back(Upper(w[static_cast<size_t>(i)]));
      add({.rule = "2.4.5/compat: case-insensitive duplicates are removed before the 50 limit (" +
                   path + ")",
           .path = path, .body = Req(w),
           .check = [](const HttpResult& r) { ExpectCampaign(r, fixture->aave_campaign); }});
    }
    add({.rule = "2.4.5: exact duplicates are not an error (" + path + ")", .path = path,
         .body = Req({kW.uniswap, kW.uniswap, kW.uniswap})});
    add({.rule = "2.6: every offending field is listed (" + path + ")", .path = path,
         .body = {{"walletAddresses", {"bad", kW.uniswap, "0x12"}}, {"imageFormat", "HUGE"},
                  {"adUnitId", 7}},
         .status = 400,
         .detail_fields = {"walletAddresses[0]", "walletAddresses[2]", "imageFormat", "adUnitId"},
         .exact_details = true});
  }
  add({.rule = "2.1: current variant without walletAddresses and without cookie is 400",
       .body = {{"imageFormat", "LANDSCAPE"}}, .status = 400, .detail_fields = {"walletAddresses"}});
  add({.rule = "compat: consented request with no wallets and no cookie is 400",
       .body = {{"walletAddresses", json::array()}, {"imageFormat", "LANDSCAPE"},
                {"cookieConsent", true}},
       .status = 400, .detail_fields = {"walletAddresses"}});
  add({.rule = "8: earlier variant needs at least one address", .path = kEarlier,
       .body = {{"walletAddresses", json::array()}, {"imageFormat", "LANDSCAPE"}}, .status = 400,
       .detail_fields = {"walletAddresses"}});
  add({.rule = "2.1: earlier variant without walletAddresses is 400", .path = kEarlier,
       .body = {{"imageFormat", "LANDSCAPE"}}, .status = 400, .detail_fields = {"walletAddresses"}});
  add({.rule = "compat localId: [] with null localId is 400", .path = kEarlier,
       .body = {{"walletAddresses", json::array()}, {"imageFormat", "LANDSCAPE"}, {"localId", nullptr}},
       .status = 400, .detail_fields = {"walletAddresses"}});
  add({.rule = "compat localId: [] with an unknown localId is 404 WALLET_CACHE_VOID", .path = kEarlier,
       .body = {{"walletAddresses", json::array()}, {"imageFormat", "LANDSCAPE"},
                {"localId", "f00dbabe"}},
       .status = 404, .expect_fields = {{"localId", "WALLET_CACHE_VOID"}}});

  // --- 2.1 / 2.3 imageFormat -------------------------------------------------------------------
  for (const std::string& path : {std::string("/v1/ads"), kEarlier}) {
    add({.rule = "compat: missing imageFormat is 400 naming it (" + path + ")", .path = path,
         .body = {{"walletAddresses", {kW.uniswap}}}, .status = 400,
         .detail_fields = {"imageFormat"}, .exact_details = true});
    add({.rule = "compat: unknown imageFormat is 400 naming it (" + path + ")", .path = path,
         .body = Req({kW.uniswap}, "SQUARE"), .status = 400, .detail_fields = {"imageFormat"}});
    add({.rule = "2.3: format names are case-sensitive (" + path + ")", .path = path,
         .body = Req({kW.uniswap}, "landscape"), .status = 400, .detail_fields = {"imageFormat"}});
    add({.rule = "2.1: imageFormat of the wrong type is 400 (" + path + ")", .path = path,
         .body = {{"walletAddresses", {kW.uniswap}}, {"imageFormat", 1}}, .status = 400,
         .detail_fields = {"imageFormat"}});
    for (const char* f : {"LANDSCAPE", "LONG_BANNER", "SHORT_BANNER"}) {
      std::string suffix = std::string(f) == "LANDSCAPE" ? "landscape"
                           : std::string(f) == "LONG_BANNER" ? "long" : "short";
      add({.rule = std::string("2.3: ") + f + " returns that format's image (" + path + ")",
           .path = path, .body = Req({kW.uniswap}, f),
           .expect_fields = {{"imageFormat", f},
                             {"imageUrl", "https://cdn.example/a-" + suffix + ".png"}}});
    }
  }
  add({.rule = "2.3: NO_IMAGE is current only (earlier: 400)", .path = kEarlier,
       .body = Req({kW.uniswap}, "NO_IMAGE"), .status = 400, .detail_fields = {"imageFormat"}});
  add({.rule = "2.2: NO_IMAGE returns imageUrl null", .body = Req({kW.uniswap}, "NO_IMAGE"),
       .expect_fields = {{"imageUrl", nullptr}, {"imageFormat", "NO_IMAGE"}},
       .exact_keys = kCurrentKeys});

  // --- adUnitId, cookieConsent, localId, unknown fields ----------------------------------------
  add({.rule = "2.2: adUnitId is echoed (current)",
       .body = {{"walletAddresses", {kW.uniswap}}, {"imageFormat", "LANDSCAPE"}, {"adUnitId", "slot-1"}},
       .expect_fields = {{"adUnitId", "slot-1"}}});
  add({.rule = "2.2: adUnitId is not echoed (earlier)", .path = kEarlier,
       .body = {{"walletAddresses", {kW.uniswap}}, {"imageFormat", "LANDSCAPE"}, {"adUnitId", "slot-1"}},
       .exact_keys = kEarlierKeys});
  add({.rule = "2.1: adUnitId must be a string",
       .body = {{"walletAddresses", {kW.uniswap}}, {"imageFormat", "LANDSCAPE"}, {"adUnitId", 12}},
       .status = 400, .detail_fields = {"adUnitId"}, .exact_details = true});
  add({.rule = "api-notes: adUnitId longer than 256 bytes is 400",
       .body = {{"walletAddresses", {kW.uniswap}}, {"imageFormat", "LANDSCAPE"},
                {"adUnitId", std::string(257, 'a')}},
       .status = 400, .detail_fields = {"adUnitId"}});
  add({.rule = "2.1: cookieConsent must be a boolean",
       .body = {{"walletAddresses", {kW.uniswap}}, {"imageFormat", "LANDSCAPE"}, {"cookieConsent", "yes"}},
       .status = 400, .detail_fields = {"cookieConsent"}, .exact_details = true});
  add({.rule = "2.1: cookieConsent true with wallets is served",
       .body = {{"walletAddresses", {kW.uniswap}}, {"imageFormat", "LANDSCAPE"}, {"cookieConsent", true}}});
  add({.rule = "compat: localId null is accepted and a new localId is bound (SDK 0.4.x)",
       .path = kEarlier,
       .body = {{"walletAddresses", {kW.uniswap}}, {"imageFormat", "LANDSCAPE"}, {"localId", nullptr}},
       .check = [](const HttpResult& r) {
         json b = json::parse(r.body);
         ASSERT_TRUE(b.contains("localId") && b["localId"].is_string()) << r.body;
         // A sealed token naming the one wallet: base64url, unguessable (random nonce).
         std::string id = b["localId"].get<std::string>();
         EXPECT_EQ(id.size(), 120u) << id;
         EXPECT_EQ(id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                        "0123456789-_"),
                   std::string::npos)
             << id;
       }});
  add({.rule = "2.1: localId longer than serve.max_local_id_bytes (2048) is 400", .path = kEarlier,
       .body = {{"walletAddresses", {kW.uniswap}}, {"imageFormat", "LANDSCAPE"},
                {"localId", std::string(2049, 'A')}},
       .status = 400, .detail_fields = {"localId"}});
  add({.rule = "compat: a localId as long as the longest issued (50 wallets) is accepted",
       .path = kEarlier,
       .body = {{"walletAddresses", {kW.uniswap}}, {"imageFormat", "LANDSCAPE"},
                {"localId", std::string(1688, 'A')}},
       .check = [](const HttpResult& r) {
         json b = json::parse(r.body);
         // Not a token of ours: unknown, so a new id is bound.
         ASSERT_TRUE(b.contains("localId") && b["localId"].is_string()) << r.body;
         EXPECT_NE(b["localId"], std::string(1688, 'A'));
       }});
  add({.rule = "2.1: localId must be a string or null", .path = kEarlier,
       .body = {{"walletAddresses", {kW.uniswap}}, {"imageFormat", "LANDSCAPE"}, {"localId", false}},
       .status = 400, .detail_fields = {"localId"}});
  add({.rule = "compat: unknown fields (referrer) are ignored (earlier)", .path = kEarlier,
       .body = {{"walletAddresses", {kW.uniswap}}, {"imageFormat", "LANDSCAPE"},
                {"referrer", "https://x.example"}, {"extra", {{"a", 1}}}}});
  add({.rule = "2.1: unknown fields are ignored (current)",
       .body = {{"walletAddresses", {kW.uniswap}}, {"imageFormat", "LANDSCAPE"}, {"foo", {1, 2}}}});

  // --- 2.2 response bodies ---------------------------------------------------------------------
  add({.rule = "2.2: earlier walletAddress is the matched wallet as sent", .path = kEarlier,
       .body = Req({kW.unknown, Upper(kW.uniswap)}),
       .expect_fields = {{"walletAddress", Upper(kW.uniswap)}}});
  add({.rule = "2.2: ad fields come from the ad and community",
       .body = Req({kW.uniswap}),
       .expect_fields = {{"headline", "Earn on Aave"},
                         {"content", "Supply on **Aave**.\\n* Earn *yield*"},
                         {"ctaLabel", "Open Aave"},
                         {"communityName", "Aave Co"},
                         {"communityLogo", "https://cdn.example/aave.png"}},
       .check = [](const HttpResult& r) {
         EXPECT_EQ(json::parse(r.body).value("adId", ""), std::to_string(fixture->aave_ad));
       }});
  // A live key's ctaUrl is the click redirect on http.public_url, which leads to the ad's own
  // ctaUrl with spclid (api-notes "Clicks"); test keys keep the ad's URL.
  for (const std::string& path : {std::string("/v1/ads"), kEarlier}) {
    add({.rule = "events: a live key's ctaUrl is {public_url}/v1/click/{token} and redirects to "
                 "the ad's ctaUrl with spclid",
         .path = path,
         .body = Req({kW.uniswap}),
         .check = [](const HttpResult& r) {
           std::string url = json::parse(r.body).value("ctaUrl", "");
           std::string prefix = std::string(kPublicUrl) + "/v1/click/";
           ASSERT_TRUE(url.starts_with(prefix)) << url;
           HttpResult click = fixture->Client().Get(url.substr(std::string(kPublicUrl).size()));
           EXPECT_EQ(click.status, 302) << click.body;
           EXPECT_TRUE(click.Header("Location").starts_with("https://app.aave.com?spclid="))
               << click.Header("Location");
           EXPECT_EQ(click.Header("Cache-Control"), "no-store");
         }});
  }
  add({.rule = "events: a test key's ctaUrl is the ad's own URL",
       .key = KeyKind::kTest,
       .body = Req({kW.uniswap}),
       .check = [](const HttpResult& r) {
         std::string url = json::parse(r.body).value("ctaUrl", "");
         EXPECT_FALSE(url.starts_with(kPublicUrl)) << url;
         EXPECT_TRUE(url.starts_with("https://")) << url;
       }});
  add({.rule = "2.2/8: 400-character content is served on the current variant",
       .body = Req({kW.aave}),
       .check = [](const HttpResult& r) {
         EXPECT_EQ(json::parse(r.body).value("content", "").size(), 400u);
       }});
  add({.rule = "2.2/8: the earlier variant only serves content under 400 characters",
       .path = kEarlier, .body = Req({kW.aave}), .status = 404});

  // --- 7. No fill ----------------------------------------------------------------------------
  add({.rule = "7: no ad is 204 without a body (current)", .body = Req({kW.unknown}),
       .status = 204, .absent_headers = {"Content-Type"},
       .check = [](const HttpResult& r) { EXPECT_TRUE(r.body.empty()); }});
  add({.rule = "7/compat: no ad is 404 with a JSON body (earlier)", .path = kEarlier,
       .body = Req({kW.unknown}), .status = 404});
  add({.rule = "selection: excluded project (another interaction of the person) means no fill",
       .body = Req({kW.aave_and_lido}), .status = 204});
  add({.rule = "selection: exclusion applies across the person's wallets",
       .body = Req({kW.aave, kW.aave_and_lido}), .status = 204});
  add({.rule = "selection: chain filter (USDC on mainnet, campaign on Base) means no fill",
       .body = Req({kW.usdc_mainnet}), .status = 204});
  add({.rule = "selection: chain filter matches the allowed chain",
       .body = Req({kW.usdc_base}),
       .check = [](const HttpResult& r) { ExpectCampaign(r, fixture->blocked_campaign); }});
  add({.rule = "selection: publisher-blocked community is never served", .key = KeyKind::kBlocking,
       .body = Req({kW.usdc_base}), .status = 204});
  add({.rule = "selection: recency window excludes stale activity",
       .body = Req({kW.uniswap_stale}), .status = 204});
  add({.rule = "selection: highest bid wins among matches (usdc_base CPM 20 > uniswap CPM 10)",
       .body = Req({kW.uniswap, kW.usdc_base}),
       .check = [](const HttpResult& r) { ExpectCampaign(r, fixture->blocked_campaign); }});
  add({.rule = "4.1: several wallets still give exactly one ad (earlier)", .path = kEarlier,
       .body = Req({kW.uniswap, kW.usdc_base}),
       .expect_fields = {{"walletAddress", kW.usdc_base}}});

  // --- Test keys ---------------------------------------------------------------------------------
  add({.rule = "compat keys: a test key answers with a sample ad even for an unknown wallet",
       .key = KeyKind::kTest, .body = Req({kW.unknown}), .exact_keys = kCurrentKeys});
  add({.rule = "compat keys: test key on the earlier variant", .path = kEarlier,
       .key = KeyKind::kTest, .body = Req({kW.unknown}), .exact_keys = kEarlierKeys});
  add({.rule = "compat keys: a test key still validates input", .key = KeyKind::kTest,
       .body = Req({"0xnope"}), .status = 400, .detail_fields = {"walletAddresses[0]"}});

  // --- CORS --------------------------------------------------------------------------------------
  add({.rule = "compat CORS: /v1/ads echoes the exact Origin with credentials",
       .origin = "https://pub.example", .body = Req({kW.uniswap}),
       .expect_headers = {{"Access-Control-Allow-Origin", "https://pub.example"},
                          {"Access-Control-Allow-Credentials", "true"}, {"Vary", "Origin"}}});
  add({.rule = "compat CORS: /v1/ads 204 also carries CORS headers", .origin = "https://pub.example",
       .body = Req({kW.unknown}), .status = 204,
       .expect_headers = {{"Access-Control-Allow-Origin", "https://pub.example"}}});
  add({.rule = "CORS: server requests (no Origin) get no Allow-Origin on /v1/ads",
       .body = Req({kW.uniswap}), .absent_headers = {"Access-Control-Allow-Origin"}});
  add({.rule = "CORS: allowed-origins list admits its origin", .key = KeyKind::kStrict,
       .origin = "https://news.example", .body = Req({kW.uniswap}),
       .expect_headers = {{"Access-Control-Allow-Origin", "https://news.example"}}});
  add({.rule = "CORS: allowed-origins list rejects other origins with 401", .key = KeyKind::kStrict,
       .origin = "https://evil.example", .body = Req({kW.uniswap}), .status = 401,
       .detail_fields = {"Origin"}});
  add({.rule = "CORS: origin match is exact (scheme)", .key = KeyKind::kStrict,
       .origin = "http://news.example", .body = Req({kW.uniswap}), .status = 401});
  add({.rule = "CORS: allowed-origins list does not apply without Origin (servers)",
       .key = KeyKind::kStrict, .body = Req({kW.uniswap})});
  add({.rule = "CORS: allowed-origins list applies to the earlier variant too", .path = kEarlier,
       .key = KeyKind::kStrict, .origin = "https://evil.example", .body = Req({kW.uniswap}),
       .status = 401});
  add({.rule = "compat CORS: /api/ads is not credentialed", .path = kEarlier,
       .origin = "https://pub.example", .body = Req({kW.uniswap}),
       .expect_headers = {{"Access-Control-Allow-Origin", "*"}},
       .absent_headers = {"Access-Control-Allow-Credentials"}});
  add({.rule = "compat CORS: preflight /v1/ads", .method = "OPTIONS", .key = KeyKind::kNone,
       .content_type = "", .origin = "https://pub.example", .status = 204,
       .expect_headers = {{"Access-Control-Allow-Origin", "https://pub.example"},
                          {"Access-Control-Allow-Credentials", "true"},
                          {"Access-Control-Allow-Methods", "POST"},
                          {"Access-Control-Allow-Headers", "content-type, x-api-key"},
                          {"Vary", "Origin"}}});
  add({.rule = "compat CORS: preflight /api/ads", .method = "OPTIONS", .path = kEarlier,
       .key = KeyKind::kNone, .content_type = "", .origin = "https://pub.example", .status = 204,
       .expect_headers = {{"Access-Control-Allow-Origin", "*"},
                          {"Access-Control-Allow-Methods", "POST"},
                          {"Access-Control-Allow-Headers", "content-type, x-api-key"}}});
  add({.rule = "identity: a consented browser request from an unlisted origin sets no cookie",
       .origin = "https://pub.example",
       .body = {{"walletAddresses", {kW.uniswap}},
                {"imageFormat", "LANDSCAPE"},
                {"cookieConsent", true}},
       .expect_headers = {{"Access-Control-Allow-Origin", "https://pub.example"}},
       .absent_headers = {"Set-Cookie"}});
  add({.rule = "identity: a consented browser request from Origin null sets no cookie",
       .origin = "null",
       .body = {{"walletAddresses", {kW.uniswap}},
                {"imageFormat", "LANDSCAPE"},
                {"cookieConsent", true}},
       .absent_headers = {"Set-Cookie"}});
  add({.rule = "identity: a consented browser request from a listed origin sets the cookie",
       .key = KeyKind::kStrict,
       .origin = "https://news.example",
       .body = {{"walletAddresses", {kW.uniswap}},
                {"imageFormat", "LANDSCAPE"},
                {"cookieConsent", true}},
       .check = [](const HttpResult& r) { EXPECT_NE(r.Header("Set-Cookie"), ""); }});
  add({.rule = "CORS: error responses on /v1/ads carry CORS so the page can read them",
       .key = KeyKind::kNone, .origin = "https://pub.example", .body = Req({kW.uniswap}),
       .status = 401, .expect_headers = {{"Access-Control-Allow-Origin", "https://pub.example"}}});

  // --- Headers and limits ------------------------------------------------------------------------
  add({.rule = "headers: 200 is no-store JSON", .body = Req({kW.uniswap}),
       .expect_headers = {{"Cache-Control", "no-store"}},
       .check = [](const HttpResult& r) {
         EXPECT_EQ(r.Header("Content-Type").substr(0, 16), "application/json");
       }});
  add({.rule = "headers: 204 is no-store", .body = Req({kW.unknown}), .status = 204,
       .expect_headers = {{"Cache-Control", "no-store"}}});
  add({.rule = "headers: 400 is no-store", .body = Req({"x"}), .status = 400,
       .expect_headers = {{"Cache-Control", "no-store"}}});
  add({.rule = "headers: earlier 404 is no-store", .path = kEarlier, .body = Req({kW.unknown}),
       .status = 404, .expect_headers = {{"Cache-Control", "no-store"}}});
  add({.rule = "limits: a body over 64 KiB is 413 with the error body",
       .raw_body = "{\"walletAddresses\":[],\"pad\":\"" + std::string(70 * 1024, 'a') + "\"}",
       .status = 413});
  add({.rule = "limits: a body just under 64 KiB is parsed",
       .raw_body = "{\"walletAddresses\":[\"" + kW.uniswap +
                   "\"],\"imageFormat\":\"LANDSCAPE\",\"pad\":\"" + std::string(60 * 1024, 'a') + "\"}"});
  return t;
}

}  // namespace
}  // namespace adserver::testing
