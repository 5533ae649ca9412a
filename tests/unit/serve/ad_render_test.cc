#include "serve/ad_render.h"

#include <gtest/gtest.h>

#include <string>

namespace adserver::serve {
namespace {

decision::Ad MakeAd() {
  decision::Ad ad;
  ad.id_str = "1000";
  ad.headline = "Swap \"fast\"";
  ad.content = "line\nbreak";
  ad.cta_url = "https://ads.example/go?a=1&b=2";
  ad.cta_label = "Try it";
  ad.images = {"https://img.example/land.png", "", "https://img.example/short.png"};
  return ad;
}

// Each piece is escaped JSON between the fields a request fills in; an image a format lacks is
// an empty piece.
TEST(AdRenderTest, PiecesAreTheEscapedFieldsInOrder) {
  decision::Community community{.id = 7, .name = "DeFi \"Club\"", .logo_url = "https://l/7.png"};
  std::string rendered = RenderAd(MakeAd(), &community);
  ASSERT_TRUE(RenderedAd::Valid(rendered));
  RenderedAd pieces(rendered);
  EXPECT_EQ(pieces.piece(kAdText),
            R"("adId":"1000","headline":"Swap \"fast\"","content":"line\nbreak","ctaUrl":)");
  EXPECT_EQ(pieces.piece(kAdCtaUrl), R"("https://ads.example/go?a=1&b=2")");
  EXPECT_EQ(pieces.piece(kAdLabel), R"(,"ctaLabel":"Try it","imageUrl":)");
  EXPECT_EQ(pieces.piece(kAdImages + 0), R"("https://img.example/land.png")");
  EXPECT_EQ(pieces.piece(kAdImages + 1), "");
  EXPECT_EQ(pieces.piece(kAdImages + 2), R"("https://img.example/short.png")");
  EXPECT_EQ(
      pieces.piece(kAdCommunity),
      R"(,"communityName":"DeFi \"Club\"","communityLogo":"https://l/7.png","imageFormat":")");
  // No community: both fields are empty strings.
  std::string none = RenderAd(MakeAd(), nullptr);
  EXPECT_EQ(RenderedAd(none).piece(kAdCommunity),
            R"(,"communityName":"","communityLogo":"","imageFormat":")");
}

// Only RenderAd's own layout is read as pieces: an ad of a catalog built by hand (empty) or any
// other bytes are rendered per request instead.
TEST(AdRenderTest, ValidOnlyForRenderedBuffers) {
  EXPECT_FALSE(RenderedAd::Valid(""));
  EXPECT_FALSE(RenderedAd::Valid("short"));
  std::string rendered = RenderAd(MakeAd(), nullptr);
  EXPECT_FALSE(RenderedAd::Valid(std::string_view(rendered).substr(0, rendered.size() - 1)));
  EXPECT_FALSE(RenderedAd::Valid(rendered + "x"));
  std::string garbage(RenderedAd::kHeaderBytes + 4, '\xff');
  EXPECT_FALSE(RenderedAd::Valid(garbage));
}

}  // namespace
}  // namespace adserver::serve
