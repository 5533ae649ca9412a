#include "ingest/validation.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace adserver::ingest {
namespace {

std::vector<std::string> Fields(const Status& status) {
  std::vector<std::string> fields;
  for (const FieldError& e : status.details()) fields.push_back(e.field);
  return fields;
}

bool MarkupOk(std::string_view content) { return ValidateContentMarkup("content", content).ok(); }

store::AdRecord GoodAd() {
  store::AdRecord a;
  a.campaign_id = 1;
  a.headline = "Stake with us";
  a.content = "**Earn** up to *5%*\\n* no lockup\\n* __audited__";
  a.cta_url = "https://example.com/stake?x=1";
  a.cta_label = "Stake now";
  a.images[0] = "https://cdn.example.com/a.png";
  return a;
}

store::CampaignRecord GoodCampaign() {
  store::CampaignRecord c;
  c.community_id = 1;
  c.name = "Launch";
  c.bid_micros = 2'500'000;
  c.target_projects = {1, 2};
  return c;
}

TEST(Utf8LengthTest, CountsCodePointsAndRejectsInvalid) {
  EXPECT_EQ(Utf8Length(""), 0);
  EXPECT_EQ(Utf8Length("abc"), 3);
  EXPECT_EQ(Utf8Length("h\xC3\xA9llo"), 5);             // é
  EXPECT_EQ(Utf8Length("\xF0\x9F\x9A\x80"), 1);          // rocket
  EXPECT_EQ(Utf8Length("\xC3"), -1);                     // truncated
  EXPECT_EQ(Utf8Length("\xC0\xAF"), -1);                 // overlong
  EXPECT_EQ(Utf8Length("\xED\xA0\x80"), -1);             // surrogate
  EXPECT_EQ(Utf8Length("\xF4\x90\x80\x80"), -1);         // above U+10FFFF
}

TEST(ContentMarkupTest, AcceptsEverySpecConstruct) {
  EXPECT_TRUE(MarkupOk("plain words"));
  EXPECT_TRUE(MarkupOk("**bold**"));
  EXPECT_TRUE(MarkupOk("*italic*"));
  EXPECT_TRUE(MarkupOk("__underline__"));
  EXPECT_TRUE(MarkupOk("* bullet one\\n* bullet two"));
  EXPECT_TRUE(MarkupOk("line one\\nline two"));
  EXPECT_TRUE(MarkupOk("**bold with *italic* inside**"));
  EXPECT_TRUE(MarkupOk("__under **bold**__"));
  EXPECT_TRUE(MarkupOk("***bold italic***"));
  EXPECT_TRUE(MarkupOk("**a *b***"));
  EXPECT_TRUE(MarkupOk("*a **b***"));
  EXPECT_TRUE(MarkupOk("* **bold** bullet"));
  EXPECT_TRUE(MarkupOk("snake_case is text"));
  EXPECT_TRUE(MarkupOk("a\\n\\nparagraph"));
  EXPECT_TRUE(MarkupOk("5 < 6 and 7 > 3"));
  EXPECT_TRUE(MarkupOk("#1 choice for DeFi"));
  EXPECT_TRUE(MarkupOk("[not a link] (really)"));
  EXPECT_TRUE(MarkupOk("caf\xC3\xA9 \xF0\x9F\x9A\x80"));
}

TEST(ContentMarkupTest, RejectsOtherMarkupAndHtml) {
  EXPECT_FALSE(MarkupOk("<b>bold</b>"));
  EXPECT_FALSE(MarkupOk("hi <script>x</script>"));
  EXPECT_FALSE(MarkupOk("<!-- comment -->"));
  EXPECT_FALSE(MarkupOk("<https://example.com>"));
  EXPECT_FALSE(MarkupOk("[click](https://evil.example)"));
  EXPECT_FALSE(MarkupOk("![img](https://x.example/a.png)"));
  EXPECT_FALSE(MarkupOk("# Heading"));
  EXPECT_FALSE(MarkupOk("ok\\n## Heading"));
  EXPECT_FALSE(MarkupOk("`code`"));
  EXPECT_FALSE(MarkupOk("```block```"));
}

TEST(ContentMarkupTest, RejectsUnbalancedOrCrossingMarkers) {
  EXPECT_FALSE(MarkupOk("**bold"));
  EXPECT_FALSE(MarkupOk("*italic"));
  EXPECT_FALSE(MarkupOk("__under"));
  EXPECT_FALSE(MarkupOk("2*3=6"));
  EXPECT_FALSE(MarkupOk("**a *b** c*"));
  EXPECT_FALSE(MarkupOk("**across\\nlines**"));
  EXPECT_FALSE(MarkupOk("****"));
  EXPECT_FALSE(MarkupOk("___x___"));
  EXPECT_FALSE(MarkupOk("*no space bullet"));
}

TEST(ContentMarkupTest, RejectsRawControlCharactersAndLength) {
  EXPECT_FALSE(MarkupOk("line\nbreak"));
  EXPECT_FALSE(MarkupOk("carriage\rreturn"));
  EXPECT_FALSE(MarkupOk("tab\there"));
  EXPECT_FALSE(MarkupOk(std::string("nul\0x", 5)));
  EXPECT_FALSE(MarkupOk("bad \xC3 utf8"));
  EXPECT_FALSE(MarkupOk(""));
  EXPECT_TRUE(MarkupOk(std::string(400, 'a')));
  EXPECT_FALSE(MarkupOk(std::string(401, 'a')));
  std::string accents;
  for (int i = 0; i < 400; ++i) accents += "\xC3\xA9";  // 400 code points, 800 bytes
  EXPECT_TRUE(MarkupOk(accents));
}

TEST(ContentMarkupTest, ErrorNamesTheFieldAndLine) {
  Status st = ValidateContentMarkup("content", "fine\\n**open");
  ASSERT_FALSE(st.ok());
  ASSERT_EQ(st.details().size(), 1u);
  EXPECT_EQ(st.details()[0].field, "content");
  EXPECT_NE(st.details()[0].message.find("line 2"), std::string::npos);
}

TEST(PlainTextTest, RejectsMarkupHtmlAndLineBreaks) {
  EXPECT_TRUE(ValidatePlainText("headline", "Earn 5% APY - today!", 100).ok());
  EXPECT_TRUE(ValidatePlainText("headline", "Rated best? 2*3 = 6", 100).ok());
  EXPECT_FALSE(ValidatePlainText("headline", "**Bold**", 100).ok());
  EXPECT_FALSE(ValidatePlainText("headline", "__under__", 100).ok());
  EXPECT_FALSE(ValidatePlainText("headline", "* bullet", 100).ok());
  EXPECT_FALSE(ValidatePlainText("headline", "a\\nb", 100).ok());
  EXPECT_FALSE(ValidatePlainText("headline", "a\nb", 100).ok());
  EXPECT_FALSE(ValidatePlainText("headline", "<i>x</i>", 100).ok());
  EXPECT_FALSE(ValidatePlainText("headline", "", 100).ok());
  EXPECT_TRUE(ValidatePlainText("ctaLabel", std::string(25, 'x'), 25).ok());
  Status st = ValidatePlainText("ctaLabel", std::string(26, 'x'), 25);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(Fields(st), std::vector<std::string>{"ctaLabel"});
}

TEST(HttpUrlTest, AcceptsAbsoluteHttpUrlsOnly) {
  EXPECT_TRUE(ValidateHttpUrl("u", "https://example.com").ok());
  EXPECT_TRUE(ValidateHttpUrl("u", "http://example.com:8080/a/b?c=d#e").ok());
  EXPECT_TRUE(ValidateHttpUrl("u", "https://127.0.0.1/x").ok());
  EXPECT_TRUE(ValidateHttpUrl("u", "https://[::1]:8443/x").ok());
  EXPECT_TRUE(ValidateHttpUrl("u", "HTTPS://Example.com/").ok());
  EXPECT_FALSE(ValidateHttpUrl("u", "").ok());
  EXPECT_FALSE(ValidateHttpUrl("u", "/relative").ok());
  EXPECT_FALSE(ValidateHttpUrl("u", "javascript:alert(1)").ok());
  EXPECT_FALSE(ValidateHttpUrl("u", "ftp://example.com").ok());
  EXPECT_FALSE(ValidateHttpUrl("u", "https://").ok());
  EXPECT_FALSE(ValidateHttpUrl("u", "https:///path").ok());
  EXPECT_FALSE(ValidateHttpUrl("u", "https://exa mple.com").ok());
  EXPECT_FALSE(ValidateHttpUrl("u", "https://user@example.com").ok());
  EXPECT_FALSE(ValidateHttpUrl("u", "https://example.com:0").ok());
  EXPECT_FALSE(ValidateHttpUrl("u", "https://example.com:99999").ok());
  EXPECT_FALSE(ValidateHttpUrl("u", "https://example.com/\x01").ok());
  // Issue 39: RFC 3986's characters only, and no quotes (a logo URL with a quote was accepted).
  EXPECT_TRUE(ValidateHttpUrl("u", "https://example.com/a%20b?x=1&y=(2)*[3]~_.-!$,;=:@").ok());
  for (const char* bad :
       {"https://cdn.example/l.png\"onerror=\"x", "https://cdn.example/l'x.png",
        "https://cdn.example/<b>", "https://cdn.example/a\\b", "https://cdn.example/{x}",
        "https://cdn.example/a|b", "https://cdn.example/a^b", "https://cdn.example/a`b",
        "https://cdn.example/100%", "https://cdn.example/%zz"}) {
    EXPECT_FALSE(ValidateHttpUrl("u", bad).ok()) << bad;
  }
  EXPECT_FALSE(ValidateHttpUrl("u", "https://example.com/" + std::string(2048, 'a')).ok());
}

TEST(OriginTest, RequiresSchemeHostPortOnly) {
  EXPECT_TRUE(ValidateOrigin("o", "https://a.example").ok());
  EXPECT_TRUE(ValidateOrigin("o", "http://localhost:3000").ok());
  EXPECT_FALSE(ValidateOrigin("o", "https://a.example/").ok());
  EXPECT_FALSE(ValidateOrigin("o", "https://a.example/path").ok());
  EXPECT_FALSE(ValidateOrigin("o", "https://A.example").ok());
  EXPECT_FALSE(ValidateOrigin("o", "a.example").ok());
}

TEST(ValidatePublisherTest, NamesEveryBadField) {
  store::PublisherRecord p;
  p.name = "";
  p.allowed_origins = {"https://ok.example", "https://bad.example/path", "https://ok.example"};
  p.blocked_communities = {3, 0};
  Status st = ValidatePublisher(p);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_EQ(Fields(st), (std::vector<std::string>{"name", "allowedOrigins[1]",
                                                  "allowedOrigins[2]", "blockedCommunities[1]"}));
}

TEST(ValidateCommunityTest, RequiresNameAndLogo) {
  store::CommunityRecord c{.name = "DeFi Club", .logo_url = "https://x.example/logo.png"};
  EXPECT_TRUE(ValidateCommunity(c).ok());
  c.name = std::string(201, 'n');
  c.logo_url = "logo.png";
  EXPECT_EQ(Fields(ValidateCommunity(c)), (std::vector<std::string>{"name", "logoUrl"}));
}

TEST(ValidateProjectTest, SlugNameContracts) {
  store::ProjectRecord p;
  p.slug = "uni-swap2";
  p.name = "Uniswap";
  p.contracts = {{1, Address{}}, {10, Address{}}};
  EXPECT_TRUE(ValidateProject(p).ok());
  EXPECT_TRUE(IsValidProjectSlug(std::string(64, 'a')));
  EXPECT_FALSE(IsValidProjectSlug(std::string(65, 'a')));
  EXPECT_FALSE(IsValidProjectSlug("Upper"));
  EXPECT_FALSE(IsValidProjectSlug("under_score"));
  EXPECT_FALSE(IsValidProjectSlug(""));
  p.slug = "Bad Slug";
  p.logo_url = "nope";
  p.contracts = {{1, Address{}}, {0, Address{}}, {1, Address{}}};
  EXPECT_EQ(Fields(ValidateProject(p)),
            (std::vector<std::string>{"slug", "logoUrl", "contracts[1].chainId", "contracts[2]"}));
}

TEST(ValidateCampaignTest, AcceptsAMinimalCampaign) {
  EXPECT_TRUE(ValidateCampaign(GoodCampaign()).ok());
}

TEST(ValidateCampaignTest, ChecksMoneyScheduleTargetingAndCap) {
  store::CampaignRecord c = GoodCampaign();
  c.bid_micros = 0;
  c.total_budget_micros = 10;
  c.daily_budget_micros = 20;
  c.starts_at = 2000;
  c.ends_at = 1000;
  c.target_projects = {};
  c.chains = {1, -5};
  c.recency_days = 0;
  c.frequency_cap = store::FrequencyCap{0, 9000};
  EXPECT_EQ(Fields(ValidateCampaign(c)),
            (std::vector<std::string>{"endsAt", "pricing.bid", "budget.daily",
                                      "targeting.projects", "targeting.chains[1]",
                                      "targeting.recencyDays", "frequencyCap.count",
                                      "frequencyCap.hours"}));
}

TEST(ValidateCampaignTest, RejectsNonPositiveBudgetsAndBadIds) {
  store::CampaignRecord c = GoodCampaign();
  c.community_id = 0;
  c.total_budget_micros = 0;
  c.daily_budget_micros = -1;
  c.target_projects = {1, -2};
  c.exclude_projects = {1};
  c.recency_days = 3651;
  EXPECT_EQ(Fields(ValidateCampaign(c)),
            (std::vector<std::string>{"communityId", "budget.total", "budget.daily",
                                      "targeting.projects[1]", "targeting.excludeProjects[0]",
                                      "targeting.recencyDays"}));
  c = GoodCampaign();
  c.recency_days = 3650;
  c.frequency_cap = store::FrequencyCap{1, 8760};
  c.total_budget_micros = 100;
  c.daily_budget_micros = 100;
  EXPECT_TRUE(ValidateCampaign(c).ok());
}

TEST(ValidateAdTest, AcceptsGoodAdAndTextOnlyAd) {
  EXPECT_TRUE(ValidateAd(GoodAd()).ok());
  store::AdRecord text_only = GoodAd();
  text_only.images = {};
  EXPECT_TRUE(ValidateAd(text_only).ok());
}

TEST(ValidateAdTest, NamesEveryBadField) {
  store::AdRecord a = GoodAd();
  a.campaign_id = 0;
  a.headline = std::string(101, 'h');
  a.content = "<b>x</b>";
  a.cta_url = "www.example.com";
  a.cta_label = "**Go**";
  a.images[1] = "not a url";
  a.weight = 0;
  EXPECT_EQ(Fields(ValidateAd(a)),
            (std::vector<std::string>{"campaignId", "headline", "content", "ctaUrl", "ctaLabel",
                                      "images.LONG_BANNER", "weight"}));
  a = GoodAd();
  a.weight = 10001;
  EXPECT_EQ(Fields(ValidateAd(a)), std::vector<std::string>{"weight"});
  a.weight = 10000;
  EXPECT_TRUE(ValidateAd(a).ok());
}

}  // namespace
}  // namespace adserver::ingest
