#pragma once

// The demo's creative images (issue 16 item 7): SVG ads with a brand colour, a logo mark, the
// brand's name, a short line and a call to action, laid out for each image format of the spec
// (LANDSCAPE 640x360, LONG_BANNER 1456x180, SHORT_BANNER 640x200) and a square logo (the
// community's logoUrl, 128x128). Pure functions; no fonts or network at run time.
//
// Text fits its box by a conservative rule: every <text> carries its box as
// data-box="x y width height", its font-size is at most height / 1.2, and
// EstimatedTextWidth(text, font-size) is at most the box's width. The estimate takes per
// character widths at least as wide as DejaVu Sans Bold (wider than Helvetica/Arial bold), so
// the text fits whichever sans-serif the viewer has.

#include <string>
#include <string_view>

namespace adserver::demo {

struct CreativeBrand {
  std::string_view name;    // "Aave"
  std::string_view mark;    // one or two characters inside the logo mark
  std::string_view color;   // brand colour, "#rrggbb"
  std::string_view color2;  // second gradient stop, "#rrggbb"
  std::string_view line;    // the short line, a few words
  std::string_view cta;     // the button's label
};

enum class CreativeKind { kLandscape, kLongBanner, kShortBanner, kLogo };

struct CreativeSize {
  int width;
  int height;
};
CreativeSize CreativeSizeOf(CreativeKind kind);

// A whole SVG document of `kind` for `brand`.
std::string RenderCreativeSvg(const CreativeBrand& brand, CreativeKind kind);

// Upper bound of the rendered width of `text` (ASCII; other bytes count as a wide glyph each)
// in a bold sans-serif at `font_size` px.
double EstimatedTextWidth(std::string_view text, double font_size);

// Smallest font size the layouts use; a line that would need less is a bug in the demo data.
inline constexpr double kMinCreativeFontSize = 12;

}  // namespace adserver::demo
