#include "serve/ad_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

namespace adserver::serve {
namespace {

using ::testing::ElementsAre;

constexpr char kA[] = "0x00000000000000000000000000000000000000aa";
constexpr char kAUpper[] = "0x00000000000000000000000000000000000000AA";
constexpr char kB[] = "0x1111111111111111111111111111111111111111";

Result<AdRequest> Parse(std::string_view body, Variant variant = Variant::kCurrent,
                        ServeOptions options = {}) {
  return ParseAdRequest(body, variant, options);
}

std::vector<FieldError> Errors(const Result<AdRequest>& r) {
  EXPECT_FALSE(r.ok());
  return r.status().details();
}

std::string Address(int i) {
  char buf[43];
  std::snprintf(buf, sizeof buf, "0x%040x", i);
  return buf;
}

std::string WalletArray(int n) {
  std::string out = "[";
  for (int i = 0; i < n; ++i) {
    if (i > 0) out += ',';
    out += '"' + Address(i + 1) + '"';
  }
  return out + "]";
}

TEST(AdRequestTest, ParsesCurrentVariantRequest) {
  auto r = Parse(std::string(R"({"walletAddresses":[")") + kA + R"(",")" + kB +
                 R"("],"imageFormat":"NO_IMAGE","adUnitId":"top","cookieConsent":true})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->variant, Variant::kCurrent);
  ASSERT_EQ(r->wallets.size(), 2u);
  EXPECT_EQ(r->wallets[0], *ParseAddress(kA));
  EXPECT_EQ(r->wallets[1], *ParseAddress(kB));
  EXPECT_THAT(r->wallet_texts, ElementsAre(kA, kB));
  EXPECT_TRUE(r->wallets_present);
  EXPECT_EQ(r->format, ImageFormat::kNoImage);
  EXPECT_EQ(r->ad_unit_id, "top");
  EXPECT_TRUE(r->cookie_consent);
  EXPECT_FALSE(r->local_id_present);
}

TEST(AdRequestTest, ParsesEarlierVariantRequestWithLocalId) {
  auto r = Parse(std::string(R"({"walletAddresses":[")") + kA +
                     R"("],"imageFormat":"LONG_BANNER","localId":"abc"})",
                 Variant::kEarlier);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->variant, Variant::kEarlier);
  EXPECT_EQ(r->format, ImageFormat::kLongBanner);
  EXPECT_TRUE(r->local_id_present);
  EXPECT_EQ(r->local_id, "abc");
  EXPECT_FALSE(r->ad_unit_id.has_value());
}

TEST(AdRequestTest, NullLocalIdIsPresentButEmpty) {
  auto r = Parse(R"({"walletAddresses":[],"imageFormat":"LANDSCAPE","localId":null})",
                 Variant::kEarlier);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->local_id_present);
  EXPECT_FALSE(r->local_id.has_value());
  EXPECT_TRUE(r->wallets_present);
  EXPECT_TRUE(r->wallets.empty());
}

TEST(AdRequestTest, AbsentLocalIdIsNotPresent) {
  auto r = Parse(R"({"imageFormat":"LANDSCAPE"})", Variant::kEarlier);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->local_id_present);
  EXPECT_FALSE(r->wallets_present);
}

TEST(AdRequestTest, MissingWalletsAreNotAParseError) {
  // Whether wallets may be absent depends on identity; the handler decides.
  auto r = Parse(R"({"imageFormat":"LANDSCAPE"})");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->wallets_present);
  EXPECT_TRUE(r->wallets.empty());
}

TEST(AdRequestTest, MalformedJsonIsABodyError) {
  for (std::string_view body : {R"({"imageFormat":)", "{", "nope", R"({"a":1}x)", "\xff"}) {
    auto r = Parse(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(r.status().message(), "Malformed JSON body");
    ASSERT_EQ(r.status().details().size(), 1u);
    EXPECT_EQ(r.status().details()[0].field, "body");
  }
}

TEST(AdRequestTest, EmptyBodyIsABodyError) {
  auto r = Parse("");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "Malformed JSON body");
  EXPECT_EQ(Errors(r)[0].field, "body");
  r = Parse("   ");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "Malformed JSON body");
}

TEST(AdRequestTest, NonObjectBodyIsABodyError) {
  for (std::string_view body : {"[]", "\"x\"", "1", "null", "true"}) {
    auto r = Parse(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().message(), "Malformed JSON body");
    EXPECT_THAT(Errors(r), ElementsAre(FieldError{"body", "body must be a JSON object"}));
  }
}

TEST(AdRequestTest, WalletAddressesMustBeAnArray) {
  for (std::string_view wallets : {R"("0x00")", "null", "{}", "7"}) {
    auto r = Parse(std::string(R"({"walletAddresses":)") + std::string(wallets) +
                   R"(,"imageFormat":"LANDSCAPE"})");
    ASSERT_FALSE(r.ok()) << wallets;
    EXPECT_EQ(r.status().message(), "Invalid request");
    EXPECT_THAT(Errors(r),
                ElementsAre(FieldError{"walletAddresses", "must be an array of strings"}));
  }
}

TEST(AdRequestTest, ReportsEachBadElementByIndex) {
  auto r = Parse(std::string(R"({"walletAddresses":[")") + kA +
                 R"(",5,"0x123",null,"0X00000000000000000000000000000000000000aa",")" + kB +
                 R"(","0x00000000000000000000000000000000000000ag"],"imageFormat":"LANDSCAPE"})");
  const std::string invalid = " is not a valid EVM address (0x followed by 40 hex characters)";
  EXPECT_THAT(Errors(r),
              ElementsAre(FieldError{"walletAddresses[1]", "walletAddresses[1] must be a string"},
                          FieldError{"walletAddresses[2]", "walletAddresses[2]" + invalid},
                          FieldError{"walletAddresses[3]", "walletAddresses[3] must be a string"},
                          FieldError{"walletAddresses[4]", "walletAddresses[4]" + invalid},
                          FieldError{"walletAddresses[6]", "walletAddresses[6]" + invalid}));
}

TEST(AdRequestTest, AddressesWithSurroundingSpaceAreInvalid) {
  auto r =
      Parse(std::string(R"({"walletAddresses":[" )") + kA + R"("],"imageFormat":"LANDSCAPE"})");
  ASSERT_EQ(Errors(r).size(), 1u);
  EXPECT_EQ(Errors(r)[0].field, "walletAddresses[0]");
}

TEST(AdRequestTest, DedupesCaseInsensitivelyKeepingFirstSpelling) {
  auto r = Parse(std::string(R"({"walletAddresses":[")") + kAUpper + R"(",")" + kB + R"(",")" + kA +
                 R"(",")" + kB + R"("],"imageFormat":"LANDSCAPE"})");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->wallets.size(), 2u);
  EXPECT_EQ(r->wallets[0], *ParseAddress(kA));
  EXPECT_THAT(r->wallet_texts, ElementsAre(kAUpper, kB));
}

TEST(AdRequestTest, AcceptsFiftyDistinctAddresses) {
  auto r = Parse(R"({"walletAddresses":)" + WalletArray(50) + R"(,"imageFormat":"LANDSCAPE"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->wallets.size(), 50u);
}

TEST(AdRequestTest, CountsAfterDedupe) {
  // 50 distinct addresses, each sent twice in different letter case: accepted.
  std::string array = "[";
  for (int i = 1; i <= 50; ++i) {
    std::string lower = Address(0xabc000 + i);
    std::string upper = lower;
    for (size_t k = 2; k < upper.size(); ++k) upper[k] = static_cast<char>(std::toupper(upper[k]));
    array += '"' + lower + "\",\"" + upper + "\",";
  }
  array.back() = ']';
  auto r = Parse(R"({"walletAddresses":)" + array + R"(,"imageFormat":"LANDSCAPE"})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->wallets.size(), 50u);
}

TEST(AdRequestTest, RejectsMoreThanFiftyDistinctAddresses) {
  auto r = Parse(R"({"walletAddresses":)" + WalletArray(51) + R"(,"imageFormat":"LANDSCAPE"})");
  EXPECT_THAT(Errors(r), ElementsAre(FieldError{"walletAddresses",
                                                "at most 50 distinct addresses are allowed"}));
  // Both variants.
  r = Parse(R"({"walletAddresses":)" + WalletArray(200) + R"(,"imageFormat":"LANDSCAPE"})",
            Variant::kEarlier);
  EXPECT_THAT(Errors(r), ElementsAre(FieldError{"walletAddresses",
                                                "at most 50 distinct addresses are allowed"}));
}

TEST(AdRequestTest, StopsAfterTenBadElements) {
  std::string array = "[";
  for (int i = 0; i < 5000; ++i) array += "1,";
  array.back() = ']';
  auto r = Parse(R"({"walletAddresses":)" + array + R"(})");
  std::vector<FieldError> errors = Errors(r);
  ASSERT_EQ(errors.size(), 11u);  // ten elements, then imageFormat
  EXPECT_EQ(errors[9].field, "walletAddresses[9]");
  EXPECT_EQ(errors[10].field, "imageFormat");
}

TEST(AdRequestTest, ImageFormatIsRequired) {
  for (std::string_view body : {R"({})", R"({"imageFormat":null})"}) {
    auto r = Parse(body);
    EXPECT_THAT(Errors(r), ElementsAre(FieldError{"imageFormat", "imageFormat is required"}));
  }
}

TEST(AdRequestTest, ImageFormatMustBeKnownForTheVariant) {
  const FieldError current{"imageFormat",
                           "imageFormat must be one of LANDSCAPE, LONG_BANNER, SHORT_BANNER, "
                           "NO_IMAGE"};
  const FieldError earlier{"imageFormat",
                           "imageFormat must be one of LANDSCAPE, LONG_BANNER, SHORT_BANNER"};
  for (std::string_view value : {R"("landscape")", R"("SQUARE")", "1", "[]", R"("")"}) {
    std::string body = R"({"imageFormat":)" + std::string(value) + "}";
    EXPECT_THAT(Errors(Parse(body)), ElementsAre(current)) << value;
    EXPECT_THAT(Errors(Parse(body, Variant::kEarlier)), ElementsAre(earlier)) << value;
  }
  EXPECT_THAT(Errors(Parse(R"({"imageFormat":"NO_IMAGE"})", Variant::kEarlier)),
              ElementsAre(earlier));
  for (std::string_view name : {"LANDSCAPE", "LONG_BANNER", "SHORT_BANNER"}) {
    auto r = Parse(R"({"imageFormat":")" + std::string(name) + R"("})", Variant::kEarlier);
    ASSERT_TRUE(r.ok()) << name;
    EXPECT_EQ(ImageFormatName(r->format), name);
  }
}

TEST(AdRequestTest, AdUnitIdRules) {
  ServeOptions options;
  options.max_ad_unit_id_bytes = 4;
  auto r = Parse(R"({"imageFormat":"LANDSCAPE","adUnitId":null})", Variant::kCurrent, options);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ad_unit_id.has_value());
  r = Parse(R"({"imageFormat":"LANDSCAPE","adUnitId":"abcd"})", Variant::kCurrent, options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ad_unit_id, "abcd");
  r = Parse(R"({"imageFormat":"LANDSCAPE","adUnitId":""})", Variant::kCurrent, options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ad_unit_id, "");
  r = Parse(R"({"imageFormat":"LANDSCAPE","adUnitId":"abcde"})", Variant::kCurrent, options);
  EXPECT_THAT(Errors(r), ElementsAre(FieldError{"adUnitId", "adUnitId must be at most 4 bytes"}));
  r = Parse(R"({"imageFormat":"LANDSCAPE","adUnitId":12})", Variant::kEarlier, options);
  EXPECT_THAT(Errors(r), ElementsAre(FieldError{"adUnitId", "adUnitId must be a string or null"}));
}

TEST(AdRequestTest, CookieConsentRules) {
  auto r = Parse(R"({"imageFormat":"LANDSCAPE","cookieConsent":null})");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->cookie_consent);
  r = Parse(R"({"imageFormat":"LANDSCAPE","cookieConsent":false})");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->cookie_consent);
  r = Parse(R"({"imageFormat":"LANDSCAPE","cookieConsent":"yes"})");
  EXPECT_THAT(Errors(r),
              ElementsAre(FieldError{"cookieConsent", "cookieConsent must be a boolean"}));
}

TEST(AdRequestTest, CookieConsentIsUnknownOnTheEarlierVariant) {
  auto r = Parse(R"({"imageFormat":"LANDSCAPE","cookieConsent":"yes"})", Variant::kEarlier);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->cookie_consent);
}

TEST(AdRequestTest, LocalIdIsUnknownOnTheCurrentVariant) {
  auto r = Parse(R"({"imageFormat":"LANDSCAPE","localId":42})");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->local_id_present);
  EXPECT_FALSE(r->local_id.has_value());
}

TEST(AdRequestTest, LocalIdRules) {
  ServeOptions options;
  options.max_local_id_bytes = 3;
  auto r = Parse(R"({"imageFormat":"LANDSCAPE","localId":"abcd"})", Variant::kEarlier, options);
  EXPECT_THAT(Errors(r), ElementsAre(FieldError{"localId", "localId must be at most 3 bytes"}));
  for (std::string_view value : {"false", "1", "{}", "[]"}) {
    r = Parse(R"({"imageFormat":"LANDSCAPE","localId":)" + std::string(value) + "}",
              Variant::kEarlier, options);
    EXPECT_THAT(Errors(r), ElementsAre(FieldError{"localId", "localId must be a string or null"}))
        << value;
  }
}

TEST(AdRequestTest, IgnoresUnknownFields) {
  auto r = Parse(R"({"referrer":"x","imageFormat":"LANDSCAPE","nested":{"a":[1,2,{}]}})");
  ASSERT_TRUE(r.ok());
}

TEST(AdRequestTest, LastDuplicateKeyWins) {
  auto r = Parse(R"({"imageFormat":"NOPE","imageFormat":"SHORT_BANNER"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->format, ImageFormat::kShortBanner);
  r = Parse(R"({"imageFormat":"SHORT_BANNER","imageFormat":"NOPE"})");
  EXPECT_FALSE(r.ok());
}

TEST(AdRequestTest, CollectsAllErrorsInFieldOrder) {
  // Body order differs from field order on purpose.
  auto r = Parse(R"({"localId":7,"adUnitId":5,"imageFormat":"X","walletAddresses":["bad"]})",
                 Variant::kEarlier);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "Invalid request");
  std::vector<std::string> fields;
  for (const FieldError& e : r.status().details()) fields.push_back(e.field);
  EXPECT_THAT(fields, ElementsAre("walletAddresses[0]", "imageFormat", "adUnitId", "localId"));

  r = Parse(R"({"cookieConsent":1,"adUnitId":5,"walletAddresses":{}})");
  fields.clear();
  for (const FieldError& e : r.status().details()) fields.push_back(e.field);
  EXPECT_THAT(fields, ElementsAre("walletAddresses", "imageFormat", "adUnitId", "cookieConsent"));
}

TEST(AdRequestTest, StringEscapesAreDecoded) {
  auto r = Parse(R"({"imageFormat":"LAND\u0053CAPE","adUnitId":"a\"b\u00e9"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->format, ImageFormat::kLandscape);
  EXPECT_EQ(r->ad_unit_id, "a\"b\xc3\xa9");
}

void ExpectSameRequest(const AdRequest& a, const AdRequest& b) {
  EXPECT_EQ(a.variant, b.variant);
  EXPECT_EQ(a.wallets, b.wallets);
  ASSERT_EQ(a.wallet_texts.size(), b.wallet_texts.size());
  for (size_t i = 0; i < a.wallet_texts.size(); ++i) {
    EXPECT_EQ(a.wallet_texts[i].view(), b.wallet_texts[i].view());
  }
  EXPECT_EQ(a.wallets_present, b.wallets_present);
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.ad_unit_id, b.ad_unit_id);
  EXPECT_EQ(a.cookie_consent, b.cookie_consent);
  EXPECT_EQ(a.local_id_present, b.local_id_present);
  EXPECT_EQ(a.local_id, b.local_id);
  EXPECT_EQ(a.bound_local_id, b.bound_local_id);
}

TEST(AdRequestTest, ReusedRequestKeepsNothingOfThePreviousOne) {
  const std::string big = R"({"walletAddresses":)" + WalletArray(50) +
                          R"(,"imageFormat":"NO_IMAGE","adUnitId":"top","cookieConsent":true})";
  const std::string earlier = std::string(R"({"walletAddresses":[")") + kB +
                              R"("],"imageFormat":"SHORT_BANNER","localId":"abc"})";
  const std::string small = R"({"imageFormat":"LANDSCAPE"})";
  AdRequest reused;
  ASSERT_TRUE(ParseAdRequest(big, Variant::kCurrent, {}, reused).ok());
  reused.bound_local_id = "bound";  // as identity resolution sets it
  ASSERT_TRUE(ParseAdRequest(earlier, Variant::kEarlier, {}, reused).ok());
  ExpectSameRequest(reused, *Parse(earlier, Variant::kEarlier));
  EXPECT_FALSE(ParseAdRequest("[1]", Variant::kCurrent, {}, reused).ok());
  ASSERT_TRUE(ParseAdRequest(big, Variant::kCurrent, {}, reused).ok());
  ASSERT_TRUE(ParseAdRequest(small, Variant::kCurrent, {}, reused).ok());
  ExpectSameRequest(reused, *Parse(small));
}

TEST(AdRequestTest, ReusedRequestReportsTheSameErrors) {
  const std::string bad = R"({"walletAddresses":["0x12",7],"imageFormat":"SQUARE"})";
  AdRequest reused;
  ASSERT_TRUE(ParseAdRequest(R"({"imageFormat":"LANDSCAPE"})", Variant::kCurrent, {}, reused).ok());
  Status status = ParseAdRequest(bad, Variant::kCurrent, {}, reused);
  EXPECT_EQ(status.details(), Errors(Parse(bad)));
  EXPECT_EQ(status.message(), Parse(bad).status().message());
}

}  // namespace
}  // namespace adserver::serve
