#include "serve/ad_handler.h"
#include "serve/ad_render.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/crypto.h"
#include "http/router.h"

namespace adserver::serve {
namespace {

// Well-formed keys: "spk_" + 30 alphanumerics.
const std::string kLiveKey = "spk_" + std::string(30, 'a');
const std::string kTestKey = "spk_" + std::string(30, 'b');
const std::string kStrictKey = "spk_" + std::string(30, 'c');   // publisher with allowed origins
const std::string kRevokedKey = "spk_" + std::string(30, 'd');  // not in the catalog

constexpr char kA[] = "0x00000000000000000000000000000000000000aa";  // has activity
constexpr char kAMixed[] = "0x00000000000000000000000000000000000000Aa";
constexpr char kB[] = "0x1111111111111111111111111111111111111111";  // no activity

constexpr char kPubOrigin[] = "https://pub.example";

const FakeClock kClock;  // 2026-01-01

std::string Json(std::string_view s) { return std::string(s); }

// The catalog: one targeted campaign (project 7) with one ad, and a second campaign whose ad
// only test keys reach (it targets a project nobody interacted with).
std::shared_ptr<decision::Catalog> MakeCatalog() {
  auto catalog = std::make_shared<decision::Catalog>();
  decision::Publisher open;
  open.id = 1;
  open.name = "Open";
  decision::Publisher strict;
  strict.id = 2;
  strict.name = "Strict";
  strict.allowed_origins = {kPubOrigin};
  catalog->publishers = {open, strict};
  catalog->api_keys = {
      decision::ApiKey{.id = 10, .publisher = 0, .hash = Sha256(kLiveKey), .test = false},
      decision::ApiKey{.id = 11, .publisher = 0, .hash = Sha256(kTestKey), .test = true},
      decision::ApiKey{.id = 12, .publisher = 1, .hash = Sha256(kStrictKey), .test = false},
  };
  catalog->communities = {decision::Community{
      .id = 1, .name = "DeFi \"Club\"", .logo_url = "https://cdn.example/logo.png"}};
  decision::Campaign targeted;
  targeted.id = 100;
  targeted.id_str = "100";
  targeted.community = 0;
  targeted.community_id = 1;
  targeted.value_micros = 5000;
  targeted.target_projects = {7};
  decision::Campaign other = targeted;
  other.id = 200;
  other.id_str = "200";
  other.target_projects = {8};
  catalog->campaigns = {targeted, other};
  decision::Ad ad;
  ad.id = 1000;
  ad.id_str = "1000";
  ad.campaign = 0;
  ad.headline = "Swap faster";
  ad.content = "**Low** fees\\nnow";
  ad.cta_url = "https://ads.example/go?a=1&b=2";
  ad.cta_label = "Try it";
  ad.images = {"https://img.example/land.png", "https://img.example/long.png", ""};
  ad.content_chars = 17;
  decision::Ad other_ad = ad;
  other_ad.id = 2000;
  other_ad.id_str = "2000";
  other_ad.campaign = 1;
  catalog->ads = {ad, other_ad};
  decision::Project project;
  project.id = 7;
  catalog->projects[7] = project;
  catalog->BuildAdLists();
  catalog->BuildIndexes();
  catalog->RenderAds(serve::RenderAd);  // as the server's catalogs are
  return catalog;
}

std::shared_ptr<decision::ActivityIndex> MakeActivity() {
  auto activity = std::make_shared<decision::ActivityIndex>();
  uint32_t today = static_cast<uint32_t>(DayOf(kClock.NowSeconds()));
  activity->Add(*ParseAddress(kA),
                decision::Interaction{
                    .project_id = 7, .chain_id = 1, .last_seen_day = today - 1, .count = 3});
  activity->Finalize();
  return activity;
}

// Owns the strings a Request points into.
struct RequestBuilder {
  std::string path = "/v1/ads";
  http::Method method = http::Method::kPost;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  RequestBuilder& Header(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
    return *this;
  }
  http::Request Build() const {
    http::Request r;
    r.method = method;
    r.target = path;
    r.path = path;
    for (const auto& [name, value] : headers) r.headers.push_back({name, value});
    r.body = body;
    return r;
  }
};

RequestBuilder AdRequest(std::string key, std::string body) {
  RequestBuilder b;
  b.Header("Content-Type", "application/json").Header("x-api-key", std::move(key));
  b.body = std::move(body);
  return b;
}

std::optional<std::string> HeaderOf(const http::Response& r, std::string_view name) {
  std::optional<std::string> found;
  for (const auto& [n, v] : r.Headers()) {
    if (n == name) {
      EXPECT_FALSE(found.has_value()) << "duplicate header " << name;
      found = std::string(v);
    }
  }
  return found;
}

class AdHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(InitCrypto()); }

  http::Response Serve(const RequestBuilder& b, Variant variant,
                       const decision::Catalog* catalog = nullptr,
                       const decision::ActivityIndex* activity = nullptr, bool ready = true) {
    http::Request request = b.Build();
    if (ready && catalog == nullptr) catalog = catalog_.get();
    if (ready && activity == nullptr) activity = activity_.get();
    return handler_.HandleWith(request, variant, catalog, activity, kClock.NowSeconds(), rng_);
  }
  http::Response Current(const RequestBuilder& b) { return Serve(b, Variant::kCurrent); }
  http::Response Earlier(const RequestBuilder& b) { return Serve(b, Variant::kEarlier); }

  std::shared_ptr<decision::Catalog> catalog_ = MakeCatalog();
  std::shared_ptr<decision::ActivityIndex> activity_ = MakeActivity();
  Published<decision::Catalog> catalogs_;
  Published<decision::ActivityIndex> activities_;
  ServeOptions options_;
  AdHandler handler_{catalogs_, activities_, kClock, options_};
  decision::Rng rng_{1};
};

void ExpectJsonHeaders(const http::Response& r) {
  EXPECT_EQ(HeaderOf(r, "Cache-Control"), "no-store");
  EXPECT_EQ(HeaderOf(r, "Content-Type"), "application/json; charset=utf-8");
}

TEST_F(AdHandlerTest, CurrentVariantServesTheTargetedAd) {
  auto r = Current(AdRequest(kLiveKey, Json(R"({"walletAddresses":[")") + kB + R"(",")" + kA +
                                           R"("],"imageFormat":"LANDSCAPE","adUnitId":"top-1"})"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body,
            R"({"campaignId":"100","adId":"1000","headline":"Swap faster",)"
            R"("content":"**Low** fees\\nnow","ctaUrl":"https://ads.example/go?a=1&b=2",)"
            R"("ctaLabel":"Try it","imageUrl":"https://img.example/land.png",)"
            R"("communityName":"DeFi \"Club\"","communityLogo":"https://cdn.example/logo.png",)"
            R"("imageFormat":"LANDSCAPE","adUnitId":"top-1"})");
  ExpectJsonHeaders(r);
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin"), std::nullopt);
}

// Responses copy the pieces RenderAds rendered once per catalog; a catalog without them (built
// by hand) is rendered per request, to the same bytes.
TEST_F(AdHandlerTest, BodiesAreTheSameWithOrWithoutPreRenderedAds) {
  decision::Catalog plain = *catalog_;
  for (decision::Ad& ad : plain.ads) {
    ASSERT_TRUE(serve::RenderedAd::Valid(ad.rendered));
    ad.rendered.clear();
  }
  for (const char* format : {"LANDSCAPE", "LONG_BANNER", "NO_IMAGE"}) {
    std::string body = Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":")" + format +
                       R"(","adUnitId":"u\"1"})";
    http::Response built = Current(AdRequest(kLiveKey, body));
    http::Response escaped = Serve(AdRequest(kLiveKey, body), Variant::kCurrent, &plain);
    ASSERT_EQ(built.status, 200) << format;
    EXPECT_EQ(built.body, escaped.body) << format;
    EXPECT_THAT(built.body, ::testing::HasSubstr(R"("communityName":"DeFi \"Club\"")"));
  }
  std::string earlier =
      Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"LONG_BANNER"})";
  http::Response built = Earlier(AdRequest(kLiveKey, earlier));
  http::Response escaped = Serve(AdRequest(kLiveKey, earlier), Variant::kEarlier, &plain);
  ASSERT_EQ(built.status, 200);
  EXPECT_EQ(built.body, escaped.body);
  EXPECT_THAT(built.body, ::testing::HasSubstr(R"("imageUrl":"https://img.example/long.png",)"));
}

TEST_F(AdHandlerTest, CurrentVariantOmitsAdUnitIdWhenNotSent) {
  auto r = Current(AdRequest(kLiveKey, Json(R"({"walletAddresses":[")") + kA +
                                           R"("],"imageFormat":"LONG_BANNER","adUnitId":null})"));
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, ::testing::Not(::testing::HasSubstr("adUnitId")));
  EXPECT_THAT(r.body, ::testing::HasSubstr(R"("imageUrl":"https://img.example/long.png")"));
  EXPECT_THAT(r.body, ::testing::HasSubstr(R"("imageFormat":"LONG_BANNER"})"));
}

TEST_F(AdHandlerTest, CurrentVariantNoImageHasNullImageUrl) {
  auto r = Current(AdRequest(
      kLiveKey, Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"NO_IMAGE"})"));
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, ::testing::HasSubstr(R"("imageUrl":null,)"));
  EXPECT_THAT(r.body, ::testing::HasSubstr(R"("imageFormat":"NO_IMAGE"})"));
  EXPECT_THAT(r.body, ::testing::Not(::testing::HasSubstr("walletAddress")));
}

TEST_F(AdHandlerTest, EarlierVariantEchoesTheMatchedWalletAsSpelled) {
  auto r = Earlier(AdRequest(
      kLiveKey, Json(R"({"walletAddresses":[")") + kB + R"(",")" + kAMixed + R"(",")" + kA +
                    R"("],"imageFormat":"LANDSCAPE","adUnitId":"x","localId":null})"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body,
            Json(R"({"walletAddress":")") + kAMixed +
                R"(","campaignId":"100","adId":"1000","headline":"Swap faster",)"
                R"("content":"**Low** fees\\nnow","ctaUrl":"https://ads.example/go?a=1&b=2",)"
                R"("ctaLabel":"Try it","imageUrl":"https://img.example/land.png",)"
                R"("communityName":"DeFi \"Club\"","communityLogo":"https://cdn.example/logo.png",)"
                R"("imageFormat":"LANDSCAPE"})");
  ExpectJsonHeaders(r);
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin"), "*");
}

TEST_F(AdHandlerTest, CurrentNoFillIs204WithoutBody) {
  auto r = Current(AdRequest(
      kLiveKey, Json(R"({"walletAddresses":[")") + kB + R"("],"imageFormat":"LANDSCAPE"})"));
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(HeaderOf(r, "Content-Type"), std::nullopt);
  EXPECT_EQ(HeaderOf(r, "Cache-Control"), "no-store");
}

TEST_F(AdHandlerTest, CurrentNoFillForAFormatWithoutCreative) {
  auto r = Current(AdRequest(
      kLiveKey, Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"SHORT_BANNER"})"));
  EXPECT_EQ(r.status, 204);
}

TEST_F(AdHandlerTest, EarlierNoFillIs404WithJsonBody) {
  auto r = Earlier(AdRequest(
      kLiveKey, Json(R"({"walletAddresses":[")") + kB + R"("],"imageFormat":"LANDSCAPE"})"));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, R"({"error":"No ad available","details":[]})");
  ExpectJsonHeaders(r);
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin"), "*");
}

TEST_F(AdHandlerTest, MissingKeyIs401) {
  RequestBuilder b;
  b.Header("Content-Type", "application/json");
  b.body = Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"LANDSCAPE"})";
  auto r = Current(b);
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body, R"({"error":"Invalid or missing API key","details":[{"field":"x-api-key",)"
                    R"("message":"x-api-key header is required"}]})");
  ExpectJsonHeaders(r);
  r = Earlier(b);
  EXPECT_EQ(r.status, 401);
  EXPECT_THAT(r.body, ::testing::StartsWith(
                          R"({"error":"Invalid API key","details":[{"field":"x-api-key")"));
}

TEST_F(AdHandlerTest, MalformedKeysAre401) {
  for (const std::string& key :
       {std::string("spk_short"), "spk_" + std::string(31, 'a'),
        "spk_" + std::string(29, 'a') + "-", "SPK_" + std::string(30, 'a'),
        "pk_" + std::string(31, 'a'), "spk_" + std::string(29, 'a') + " "}) {
    auto r = Current(AdRequest(key, R"({"imageFormat":"LANDSCAPE"})"));
    EXPECT_EQ(r.status, 401) << key;
    EXPECT_THAT(
        r.body,
        ::testing::HasSubstr(
            R"("field":"x-api-key","message":"x-api-key must be spk_ followed by 30 letters or digits")"))
        << key;
  }
}

TEST_F(AdHandlerTest, UnknownOrRevokedKeyIs401) {
  auto r = Current(AdRequest(kRevokedKey, R"({"imageFormat":"LANDSCAPE"})"));
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body, R"({"error":"Invalid or missing API key","details":[{"field":"x-api-key",)"
                    R"("message":"x-api-key is not an active API key"}]})");
  r = Earlier(AdRequest(kRevokedKey, R"({"imageFormat":"LANDSCAPE"})"));
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body, R"({"error":"Invalid API key","details":[{"field":"x-api-key",)"
                    R"("message":"x-api-key is not an active API key"}]})");
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin"), "*");
}

// Each thread remembers its last resolved key (to skip hashing a repeat); the memo must never
// answer for another key, another catalog, or a catalog whose keys changed.
TEST_F(AdHandlerTest, RememberedKeyAnswersOnlyForTheSameKeyInTheSameCatalog) {
  const std::string body =
      Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"LANDSCAPE"})";
  ASSERT_EQ(Current(AdRequest(kLiveKey, body)).status, 200);
  ASSERT_EQ(Current(AdRequest(kLiveKey, body)).status, 200);  // from the memo
  // Another key, differing from the remembered one only in its last character.
  std::string near = kLiveKey;
  near.back() = 'b';
  EXPECT_EQ(Current(AdRequest(near, body)).status, 401);
  // The test key (another publisher's kind of key) after the live one: served samples.
  ASSERT_EQ(Current(AdRequest(kLiveKey, body)).status, 200);
  auto sample = Current(AdRequest(kTestKey, body));
  EXPECT_EQ(sample.status, 200);
  ASSERT_EQ(Current(AdRequest(kLiveKey, body)).status, 200);
  // The strict publisher's key right after: its Origin list applies, not the live key's.
  auto strict = AdRequest(kStrictKey, body);
  strict.Header("Origin", "https://evil.example");
  EXPECT_EQ(Current(strict).status, 401);

  // The key revoked: a new catalog without it.
  ASSERT_EQ(Current(AdRequest(kLiveKey, body)).status, 200);
  auto revoked = MakeCatalog();
  revoked->api_keys.erase(revoked->api_keys.begin());
  revoked->BuildIndexes();
  EXPECT_EQ(Serve(AdRequest(kLiveKey, body), Variant::kCurrent, revoked.get()).status, 401);
  // The same catalog object rebuilt in place without the key (a new generation).
  ASSERT_EQ(Current(AdRequest(kLiveKey, body)).status, 200);
  catalog_->api_keys.erase(catalog_->api_keys.begin());
  catalog_->BuildIndexes();
  EXPECT_EQ(Current(AdRequest(kLiveKey, body)).status, 401);
}

TEST_F(AdHandlerTest, KeyIsCheckedBeforeBody) {
  auto r = Current(AdRequest(kRevokedKey, "not json"));
  EXPECT_EQ(r.status, 401);
}

// The body is parsed before the key is hashed (to prefetch the wallets); its errors must still
// come after the key's, the Origin's and the Content-Type's.
TEST_F(AdHandlerTest, ErrorsKeepTheSpecOrderThoughTheBodyIsParsedFirst) {
  const std::string good =
      Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"LANDSCAPE"})";
  for (const std::string& body : {good, std::string(R"({"walletAddresses":["0x12"]})")}) {
    auto r = Current(AdRequest(kRevokedKey, body));
    EXPECT_EQ(r.status, 401);
    EXPECT_THAT(r.body, ::testing::HasSubstr("x-api-key is not an active API key"));
    auto b = AdRequest(kStrictKey, body);
    b.Header("Origin", "https://evil.example");
    r = Current(b);
    EXPECT_EQ(r.status, 401);
    EXPECT_THAT(r.body, ::testing::HasSubstr("Origin not allowed for this API key"));
    RequestBuilder plain;
    plain.Header("x-api-key", kLiveKey);
    plain.Header("Content-Type", "text/plain");
    plain.body = body;
    r = Serve(plain, Variant::kCurrent);
    EXPECT_EQ(r.status, 400);
    EXPECT_THAT(r.body, ::testing::HasSubstr("Unsupported Content-Type"));
  }
  EXPECT_EQ(Current(AdRequest(kLiveKey, R"({"walletAddresses":["0x12"]})")).status, 400);
  // A body too large to parse before the key check (padded with spaces) answers the same.
  const std::string large = good + std::string(9000, ' ');
  EXPECT_EQ(Current(AdRequest(kRevokedKey, large)).status, 401);
  EXPECT_EQ(Current(AdRequest(kLiveKey, large)).status, Current(AdRequest(kLiveKey, good)).status);
  EXPECT_EQ(Current(AdRequest(kLiveKey, R"({"walletAddresses":["0x12"]})" + std::string(9000, ' ')))
                .status,
            400);
}

TEST_F(AdHandlerTest, OriginOutsideAllowedListIs401WithoutCorsOnCurrent) {
  auto b = AdRequest(kStrictKey,
                     Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"LANDSCAPE"})");
  b.Header("Origin", "https://evil.example");
  auto r = Current(b);
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body,
            R"({"error":"Origin not allowed for this API key","details":[{"field":"Origin",)"
            R"("message":"Origin is not in the allowed origins of this API key"}]})");
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin"), std::nullopt);
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Credentials"), std::nullopt);
  ExpectJsonHeaders(r);

  r = Earlier(b);
  EXPECT_EQ(r.status, 401);
  EXPECT_THAT(r.body, ::testing::HasSubstr(R"("error":"Origin not allowed for this API key")"));
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin"), "*");
}

TEST_F(AdHandlerTest, AllowedOriginIsServedAndEchoed) {
  auto b = AdRequest(kStrictKey,
                     Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"LANDSCAPE"})");
  b.Header("Origin", kPubOrigin);
  auto r = Current(b);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin"), kPubOrigin);
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Credentials"), "true");
  EXPECT_EQ(HeaderOf(r, "Vary"), "Origin");
}

TEST_F(AdHandlerTest, RequestsWithoutOriginIgnoreTheAllowedList) {
  auto r = Current(AdRequest(
      kStrictKey, Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"LANDSCAPE"})"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(HeaderOf(r, "Vary"), std::nullopt);
}

TEST_F(AdHandlerTest, AnyOriginIsEchoedForPublishersWithoutList) {
  auto b = AdRequest(kLiveKey,
                     Json(R"({"walletAddresses":[")") + kB + R"("],"imageFormat":"LANDSCAPE"})");
  b.Header("Origin", "https://anywhere.example");
  auto r = Current(b);
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin"), "https://anywhere.example");
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Credentials"), "true");
  EXPECT_EQ(HeaderOf(r, "Vary"), "Origin");
}

TEST_F(AdHandlerTest, CurrentErrorsCarryCorsSoBrowsersCanReadThem) {
  auto b = AdRequest(kRevokedKey, "{}");
  b.Header("Origin", "https://anywhere.example");
  auto r = Current(b);
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin"), "https://anywhere.example");
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Credentials"), "true");

  auto bad = AdRequest(kLiveKey, "{}");
  bad.Header("Origin", "https://anywhere.example");
  r = Current(bad);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin"), "https://anywhere.example");
  EXPECT_EQ(HeaderOf(r, "Vary"), "Origin");
}

TEST_F(AdHandlerTest, ContentTypeMustBeJson) {
  const std::string body =
      Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"LANDSCAPE"})";
  for (std::optional<std::string> type :
       {std::optional<std::string>(), std::optional<std::string>("text/plain"),
        std::optional<std::string>("application/jsonx"), std::optional<std::string>(""),
        std::optional<std::string>("application/x-www-form-urlencoded")}) {
    RequestBuilder b;
    b.Header("x-api-key", kLiveKey);
    if (type) b.Header("Content-Type", *type);
    b.body = body;
    for (Variant v : {Variant::kCurrent, Variant::kEarlier}) {
      auto r = Serve(b, v);
      EXPECT_EQ(r.status, 400) << type.value_or("<none>");
      EXPECT_EQ(r.body, R"({"error":"Unsupported Content-Type","details":[{"field":"Content-Type",)"
                        R"("message":"Content-Type must be application/json"}]})");
    }
  }
}

TEST_F(AdHandlerTest, ContentTypeWithCharsetOrOtherCaseIsAccepted) {
  const std::string body =
      Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"LANDSCAPE"})";
  for (std::string type : {"application/json; charset=utf-8", "Application/JSON;charset=UTF-8",
                           " application/json ", "application/json ; charset=\"utf-8\""}) {
    RequestBuilder b;
    b.Header("Content-Type", type).Header("x-api-key", kLiveKey);
    b.body = body;
    EXPECT_EQ(Current(b).status, 200) << type;
    EXPECT_EQ(Earlier(b).status, 200) << type;
  }
}

TEST_F(AdHandlerTest, MalformedBodyIs400) {
  for (std::string body : {"", "{", "[1]", "null"}) {
    auto r = Current(AdRequest(kLiveKey, body));
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_THAT(r.body, ::testing::StartsWith(
                            R"({"error":"Malformed JSON body","details":[{"field":"body",)"))
        << body;
    ExpectJsonHeaders(r);
  }
}

TEST_F(AdHandlerTest, ValidationErrorsAreCollected) {
  auto r = Current(AdRequest(
      kLiveKey, R"({"walletAddresses":["0x12",3],"imageFormat":"SQUARE","cookieConsent":"y"})"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(
      r.body,
      R"({"error":"Invalid request","details":[)"
      R"j({"field":"walletAddresses[0]","message":"walletAddresses[0] is not a valid EVM address (0x followed by 40 hex characters)"},)j"
      R"({"field":"walletAddresses[1]","message":"walletAddresses[1] must be a string"},)"
      R"({"field":"imageFormat","message":"imageFormat must be one of LANDSCAPE, LONG_BANNER, SHORT_BANNER, NO_IMAGE"},)"
      R"({"field":"cookieConsent","message":"cookieConsent must be a boolean"}]})");
}

TEST_F(AdHandlerTest, EarlierRejectsNoImage) {
  auto r = Earlier(AdRequest(
      kLiveKey, Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"NO_IMAGE"})"));
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body, ::testing::HasSubstr(R"("field":"imageFormat")"));
}

TEST_F(AdHandlerTest, CurrentRequiresWallets) {
  const std::string expected =
      R"({"error":"Invalid request","details":[{"field":"walletAddresses",)"
      R"("message":"walletAddresses is required unless the request carries the identity cookie"}]})";
  for (std::string body :
       {R"({"imageFormat":"LANDSCAPE"})",
        R"({"walletAddresses":[],"imageFormat":"LANDSCAPE","cookieConsent":true})"}) {
    auto r = Current(AdRequest(kLiveKey, body));
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_EQ(r.body, expected);
  }
}

TEST_F(AdHandlerTest, EarlierRequiresWalletsWithoutLocalId) {
  const std::string expected =
      R"({"error":"Invalid request","details":[{"field":"walletAddresses",)"
      R"("message":"at least one address is required"}]})";
  for (std::string body :
       {R"({"imageFormat":"LANDSCAPE"})", R"({"walletAddresses":[],"imageFormat":"LANDSCAPE"})",
        R"({"walletAddresses":[],"imageFormat":"LANDSCAPE","localId":null})",
        R"({"imageFormat":"LANDSCAPE","localId":"abc"})"}) {
    auto r = Earlier(AdRequest(kLiveKey, body));
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_EQ(r.body, expected) << body;
  }
}

TEST_F(AdHandlerTest, EarlierEmptyWalletsWithUnknownLocalIdVoidsIt) {
  auto r = Earlier(
      AdRequest(kLiveKey, R"({"walletAddresses":[],"imageFormat":"LANDSCAPE","localId":"abc"})"));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, R"({"error":"No ad available","details":[],"localId":"WALLET_CACHE_VOID"})");
  ExpectJsonHeaders(r);
}

TEST_F(AdHandlerTest, NotReadyIs503OnCurrentAnd500OnEarlier) {
  auto b = AdRequest(kLiveKey,
                     Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"LANDSCAPE"})");
  b.Header("Origin", "https://x.example");
  auto r = Serve(b, Variant::kCurrent, nullptr, nullptr, /*ready=*/false);
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, R"({"error":"Serving unavailable","details":[]})");
  ExpectJsonHeaders(r);
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin"), "https://x.example");
  r = Serve(b, Variant::kEarlier, nullptr, nullptr, /*ready=*/false);
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, R"({"error":"Internal server error","details":[]})");
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin"), "*");
  // Catalog without activity is not ready either.
  r = Serve(b, Variant::kCurrent, catalog_.get(), nullptr, /*ready=*/false);
  EXPECT_EQ(r.status, 503);
}

TEST_F(AdHandlerTest, BrokenCatalogIsAServerFault) {
  decision::Catalog broken = *catalog_;
  broken.api_keys[0].publisher = 9;  // no such publisher
  broken.BuildIndexes();
  auto b = AdRequest(kLiveKey,
                     Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"LANDSCAPE"})");
  EXPECT_EQ(Serve(b, Variant::kCurrent, &broken, activity_.get()).status, 503);
  EXPECT_EQ(Serve(b, Variant::kEarlier, &broken, activity_.get()).status, 500);
}

TEST_F(AdHandlerTest, TestKeysRotateSampleAdsWithoutTargeting) {
  std::set<std::string> ads;
  for (int i = 0; i < 4; ++i) {
    // kB has no activity: a live key gets no fill, a test key always a sample.
    auto r = Current(AdRequest(
        kTestKey, Json(R"({"walletAddresses":[")") + kB + R"("],"imageFormat":"LANDSCAPE"})"));
    ASSERT_EQ(r.status, 200);
    auto pos = r.body.find(R"("adId":")");
    ASSERT_NE(pos, std::string::npos);
    ads.insert(r.body.substr(pos + 8, 4));
  }
  EXPECT_EQ(ads, (std::set<std::string>{"1000", "2000"}));
  auto r = Earlier(AdRequest(
      kTestKey, Json(R"({"walletAddresses":[")") + kB + R"("],"imageFormat":"LANDSCAPE"})"));
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, ::testing::StartsWith(Json(R"({"walletAddress":")") + kB + "\""));
}

TEST_F(AdHandlerTest, TestKeysStillValidateTheRequest) {
  auto r = Current(AdRequest(kTestKey, R"({"imageFormat":"LANDSCAPE"})"));
  EXPECT_EQ(r.status, 400);
}

TEST_F(AdHandlerTest, PreflightCurrentEchoesOrigin) {
  RequestBuilder b;
  b.method = http::Method::kOptions;
  b.Header("Origin", "https://pub.example").Header("Access-Control-Request-Method", "POST");
  http::Request request = b.Build();
  auto r = handler_.Preflight(request, Variant::kCurrent);
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin"), "https://pub.example");
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Credentials"), "true");
  EXPECT_EQ(HeaderOf(r, "Vary"), "Origin");
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Methods"), "POST");
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Headers"), "content-type, x-api-key");
  EXPECT_EQ(HeaderOf(r, "Access-Control-Max-Age"), "600");
  EXPECT_EQ(HeaderOf(r, "Cache-Control"), "no-store");
  EXPECT_EQ(HeaderOf(r, "Content-Type"), std::nullopt);

  RequestBuilder no_origin;
  no_origin.method = http::Method::kOptions;
  r = handler_.Preflight(no_origin.Build(), Variant::kCurrent);
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin"), std::nullopt);
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Credentials"), std::nullopt);
  EXPECT_EQ(HeaderOf(r, "Vary"), "Origin");
}

TEST_F(AdHandlerTest, PreflightEarlierIsPublic) {
  RequestBuilder b;
  b.method = http::Method::kOptions;
  b.Header("Origin", "https://pub.example");
  http::Request request = b.Build();
  auto r = handler_.Preflight(request, Variant::kEarlier);
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Credentials"), std::nullopt);
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Methods"), "POST");
  EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Headers"), "content-type, x-api-key");
  EXPECT_EQ(HeaderOf(r, "Access-Control-Max-Age"), "600");
}

TEST_F(AdHandlerTest, HandleUsesPublishedSnapshots) {
  auto b = AdRequest(kLiveKey,
                     Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"LANDSCAPE"})");
  http::Request request = b.Build();
  EXPECT_EQ(handler_.Handle(request, Variant::kCurrent).status, 503);
  EXPECT_EQ(handler_.Handle(request, Variant::kEarlier).status, 500);
  catalogs_.Publish(catalog_);
  activities_.Publish(activity_);
  EXPECT_EQ(handler_.Handle(request, Variant::kCurrent).status, 200);
  EXPECT_EQ(handler_.Handle(request, Variant::kEarlier).status, 200);
}

TEST_F(AdHandlerTest, RegistersPostAndOptionsInline) {
  catalogs_.Publish(catalog_);
  activities_.Publish(activity_);
  http::Router router;
  handler_.RegisterRoutes(router);
  const std::string body =
      Json(R"({"walletAddresses":[")") + kA + R"("],"imageFormat":"LANDSCAPE"})";
  struct Case {
    std::string path;
    http::Method method;
    int status;
  };
  for (const Case& c :
       {Case{"/v1/ads", http::Method::kPost, 200}, Case{"/api/ads", http::Method::kPost, 200},
        Case{"/v1/ads", http::Method::kOptions, 204},
        Case{"/api/ads", http::Method::kOptions, 204}}) {
    RequestBuilder b = AdRequest(kLiveKey, body);
    b.path = c.path;
    b.method = c.method;
    http::Request request = b.Build();
    http::Router::Match match = router.Find(request);
    ASSERT_NE(match.handler, nullptr) << c.path;
    EXPECT_EQ(match.options->dispatch, http::Dispatch::kInline);
    EXPECT_EQ(match.options->max_body_bytes, 64u * 1024);
    http::Response r = (*match.handler)(request);
    EXPECT_EQ(r.status, c.status) << c.path;
    bool earlier = c.path == "/api/ads";
    EXPECT_EQ(HeaderOf(r, "Access-Control-Allow-Origin").has_value(), earlier) << c.path;
  }
}

}  // namespace
}  // namespace adserver::serve
