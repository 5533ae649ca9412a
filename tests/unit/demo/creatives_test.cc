#include "demo/creatives.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "demo/demo.h"

namespace adserver::demo {
namespace {

struct SvgText {
  double x = 0, y = 0, size = 0;
  std::string anchor, text;
  double bx = 0, by = 0, bw = 0, bh = 0;
};

std::string Unescape(std::string s) {
  for (auto [from, to] : {std::pair<std::string, std::string>{"&lt;", "<"},
                          {"&gt;", ">"},
                          {"&quot;", "\""},
                          {"&amp;", "&"}}) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
      s.replace(at, from.size(), to);
    }
  }
  return s;
}

std::vector<SvgText> Texts(const std::string& svg) {
  static const std::regex kText(
      "<text x=\"([0-9.]+)\" y=\"([0-9.]+)\" font-size=\"([0-9.]+)\" font-weight=\"[0-9]+\" "
      "text-anchor=\"(start|middle|end)\" fill=\"[^\"]+\"(?: fill-opacity=\"[0-9.]+\")? "
      "data-box=\"([0-9.]+) ([0-9.]+) ([0-9.]+) ([0-9.]+)\">([^<]*)</text>");
  std::vector<SvgText> out;
  for (std::sregex_iterator it(svg.begin(), svg.end(), kText), end; it != end; ++it) {
    const std::smatch& m = *it;
    out.push_back(SvgText{std::stod(m[1]), std::stod(m[2]), std::stod(m[3]), m[4], Unescape(m[9]),
                          std::stod(m[5]), std::stod(m[6]), std::stod(m[7]), std::stod(m[8])});
  }
  return out;
}

CreativeSize SizeOf(const std::string& name) {
  if (name.starts_with("logo-")) return CreativeSizeOf(CreativeKind::kLogo);
  if (name.find("LONG_BANNER") != std::string::npos) {
    return CreativeSizeOf(CreativeKind::kLongBanner);
  }
  if (name.find("SHORT_BANNER") != std::string::npos) {
    return CreativeSizeOf(CreativeKind::kShortBanner);
  }
  return CreativeSizeOf(CreativeKind::kLandscape);
}

TEST(DemoCreativesTest, FormatsHaveTheSpecSizes) {
  EXPECT_EQ(CreativeSizeOf(CreativeKind::kLandscape).width, 640);
  EXPECT_EQ(CreativeSizeOf(CreativeKind::kLandscape).height, 360);
  EXPECT_EQ(CreativeSizeOf(CreativeKind::kLongBanner).width, 1456);
  EXPECT_EQ(CreativeSizeOf(CreativeKind::kLongBanner).height, 180);
  EXPECT_EQ(CreativeSizeOf(CreativeKind::kShortBanner).width, 640);
  EXPECT_EQ(CreativeSizeOf(CreativeKind::kShortBanner).height, 200);
}

// The rule of demo_creatives.h: each text's box lies in the image, its font size is at most
// the box's height / 1.2 (and readable), its estimated width at most the box's width, and it
// is anchored inside the box.
TEST(DemoCreativesTest, EveryDemoCreativesTextFitsItsBox) {
  std::vector<std::string> names = DemoCreativeNames();
  ASSERT_EQ(names.size(), 5u * 4u);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    std::optional<std::string> svg = DemoCreativeSvg(name);
    ASSERT_TRUE(svg.has_value());
    CreativeSize size = SizeOf(name);
    std::string dims = "width=\"";
    dims += std::to_string(size.width);
    dims += "\" height=\"";
    dims += std::to_string(size.height);
    EXPECT_NE(svg->find(dims + "\""), std::string::npos);
    std::vector<SvgText> texts = Texts(*svg);
    // Every <text> was parsed: a layout change the regex misses fails here, not silently.
    size_t count = 0;
    for (size_t at = svg->find("<text"); at != std::string::npos; at = svg->find("<text", at + 1)) {
      ++count;
    }
    ASSERT_EQ(texts.size(), count) << *svg;
    // Logos have the mark; ads the mark, the name, the line (LANDSCAPE: in one or two
    // lines) and the button.
    if (name.starts_with("logo-")) {
      EXPECT_EQ(texts.size(), 1u) << *svg;
    } else {
      EXPECT_GE(texts.size(), 4u) << *svg;
      EXPECT_LE(texts.size(), name.find("LANDSCAPE") != std::string::npos ? 5u : 4u) << *svg;
    }
    for (const SvgText& t : texts) {
      SCOPED_TRACE(t.text);
      EXPECT_FALSE(t.text.empty());
      EXPECT_GE(t.bx, 0);
      EXPECT_GE(t.by, 0);
      EXPECT_LE(t.bx + t.bw, size.width + 0.05);
      EXPECT_LE(t.by + t.bh, size.height + 0.05);
      EXPECT_GE(t.size, kMinCreativeFontSize);
      EXPECT_LE(t.size, t.bh / 1.2 + 0.05);
      EXPECT_LE(EstimatedTextWidth(t.text, t.size), t.bw + 0.05);
      double expected_x = t.anchor == "start"    ? t.bx
                          : t.anchor == "middle" ? t.bx + t.bw / 2
                                                 : t.bx + t.bw;
      EXPECT_NEAR(t.x, expected_x, 0.1);
      // Ascent (<= 0.95 em) and descent (<= 0.24 em) inside the box.
      EXPECT_GE(t.y - 0.95 * t.size, t.by - 0.1);
      EXPECT_LE(t.y + 0.24 * t.size, t.by + t.bh + 0.1);
    }
  }
}

TEST(DemoCreativesTest, AdsShowTheBrandTheLineAndTheButton) {
  std::optional<std::string> svg = DemoCreativeSvg("c0-LANDSCAPE.svg");
  ASSERT_TRUE(svg.has_value());
  std::string all;
  for (const SvgText& t : Texts(*svg)) all += t.text + "|";
  EXPECT_NE(all.find("Aave|"), std::string::npos) << all;
  EXPECT_NE(all.find("Open Aave|"), std::string::npos) << all;
  EXPECT_NE(svg->find("#b6509e"), std::string::npos);  // the brand colour
  EXPECT_NE(svg->find("<circle"), std::string::npos);  // the logo mark
  // No placeholder label and nothing fetched from elsewhere.
  EXPECT_EQ(svg->find("adserver demo"), std::string::npos);
  EXPECT_EQ(svg->find("href"), std::string::npos);
  EXPECT_EQ(svg->find("http://", svg->find("xmlns") + 40), std::string::npos);
}

TEST(DemoCreativesTest, EachCampaignHasItsOwnColours) {
  std::set<std::string> seen;
  for (const std::string& name : DemoCreativeNames()) {
    if (name.find("SHORT_BANNER") == std::string::npos) continue;
    std::optional<std::string> svg = DemoCreativeSvg(name);
    ASSERT_TRUE(svg.has_value());
    size_t at = svg->find("stop-color=\"");
    ASSERT_NE(at, std::string::npos);
    seen.insert(svg->substr(at, 20));
  }
  EXPECT_EQ(seen.size(), 5u);
}

TEST(DemoCreativesTest, UnknownNamesAreNotCreatives) {
  EXPECT_FALSE(DemoCreativeSvg("c9-LANDSCAPE.svg").has_value());
  EXPECT_FALSE(DemoCreativeSvg("c0-NO_IMAGE.svg").has_value());
  EXPECT_FALSE(DemoCreativeSvg("../etc/passwd").has_value());
}

TEST(DemoCreativesTest, TextWidthEstimateIsConservative) {
  // DejaVu Sans Bold advances (em): "m" 1.042, "W" 1.030, "a" 0.675, "0" 0.696, " " 0.348.
  EXPECT_GE(EstimatedTextWidth("m", 100), 104.2);
  EXPECT_GE(EstimatedTextWidth("W", 100), 103.0);
  EXPECT_GE(EstimatedTextWidth("a", 100), 67.5);
  EXPECT_GE(EstimatedTextWidth("0", 100), 69.6);
  EXPECT_GE(EstimatedTextWidth(" ", 100), 34.8);
  EXPECT_DOUBLE_EQ(EstimatedTextWidth("ab", 20), 2 * EstimatedTextWidth("ab", 10));
}

}  // namespace
}  // namespace adserver::demo
