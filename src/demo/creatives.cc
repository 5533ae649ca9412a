#include "demo/creatives.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace adserver::demo {
namespace {

// Width in em of one character: at least DejaVu Sans Bold's advance, rounded up.
double CharEm(unsigned char c) {
  if (c >= 0x80) return 1.0;
  if (c == ' ') return 0.38;
  if (std::string_view("il.,:;!'|").find(static_cast<char>(c)) != std::string_view::npos) {
    return 0.40;
  }
  if (std::string_view("fjrt()[]").find(static_cast<char>(c)) != std::string_view::npos) {
    return 0.54;
  }
  if (c == 'm' || c == 'w' || c == 'M' || c == 'W') return 1.12;
  if (c >= 'A' && c <= 'Z') return 0.88;
  if (c >= '0' && c <= '9') return 0.72;
  if (c >= 'a' && c <= 'z') return 0.74;
  return 0.84;  // punctuation and symbols: as wide as the widest of them ('%', '&', '@' < 1)
}

struct Box {
  double x, y, w, h;
};

enum class Anchor { kStart, kMiddle, kEnd };

// `v` with one decimal (lengths) or two (opacities), without a trailing ".0".
std::string Num(double v, int decimals = 1) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s(buf);
  if (s.ends_with(decimals == 1 ? ".0" : ".00")) s.resize(s.size() - decimals - 1);
  return s;
}

std::string Escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The largest size up to `max_size` at which `text` fits `box` by the rule in the header.
double FitFontSize(std::string_view text, const Box& box, double max_size) {
  double per_px = EstimatedTextWidth(text, 1.0);
  double size = std::min({max_size, box.h / 1.2, per_px > 0 ? box.w / per_px : max_size});
  return std::floor(size * 10) / 10;  // Num() prints one decimal: never round up past the box
}

// One line of text in `box` at `size`, vertically centred on the box.
void Text(std::string& svg, std::string_view text, const Box& box, double size, Anchor anchor,
          std::string_view fill, int weight = 700, double opacity = 1.0) {
  double x = anchor == Anchor::kStart    ? box.x
             : anchor == Anchor::kMiddle ? box.x + box.w / 2
                                         : box.x + box.w;
  const char* anchor_name = anchor == Anchor::kStart    ? "start"
                            : anchor == Anchor::kMiddle ? "middle"
                                                        : "end";
  // A cap height of ~0.72 em: the baseline 0.36 em below the centre centres capitals.
  double baseline = box.y + box.h / 2 + 0.36 * size;
  svg += "<text x=\"" + Num(x) + "\" y=\"" + Num(baseline) + "\" font-size=\"" + Num(size) +
         "\" font-weight=\"" + std::to_string(weight) + "\" text-anchor=\"" + anchor_name +
         "\" fill=\"" + std::string(fill) + "\"";
  if (opacity < 1.0) svg += " fill-opacity=\"" + Num(opacity, 2) + "\"";
  svg += " data-box=\"" + Num(box.x) + " " + Num(box.y) + " " + Num(box.w) + " " + Num(box.h) +
         "\">" + Escape(text) + "</text>";
}

void Open(std::string& svg, const CreativeBrand& brand, CreativeSize size) {
  std::string w = std::to_string(size.width), h = std::to_string(size.height);
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h +
         "\" viewBox=\"0 0 " + w + " " + h +
         "\" font-family=\"Inter, 'Helvetica Neue', Arial, 'DejaVu Sans', sans-serif\">"
         "<title>" +
         Escape(brand.name) + ": " + Escape(brand.line) +
         "</title><defs><linearGradient id=\"bg\" x1=\"0\" y1=\"0\" x2=\"1\" y2=\"1\">"
         "<stop offset=\"0\" stop-color=\"" +
         std::string(brand.color) + "\"/><stop offset=\"1\" stop-color=\"" +
         std::string(brand.color2) + "\"/></linearGradient></defs><rect width=\"" + w +
         "\" height=\"" + h + "\" fill=\"url(#bg)\"/>";
}

void Circle(std::string& svg, double cx, double cy, double r, std::string_view fill,
            double opacity = 1.0) {
  svg += "<circle cx=\"" + Num(cx) + "\" cy=\"" + Num(cy) + "\" r=\"" + Num(r) + "\" fill=\"" +
         std::string(fill) + "\"";
  if (opacity < 1.0) svg += " fill-opacity=\"" + Num(opacity, 2) + "\"";
  svg += "/>";
}

// The logo mark: a white disc with the brand's initials in its colour.
void Mark(std::string& svg, const CreativeBrand& brand, double cx, double cy, double r) {
  Circle(svg, cx, cy, r, "#ffffff");
  double side = r * 1.35;  // the square inside the disc
  Box box{cx - side / 2, cy - side / 2, side, side};
  Text(svg, brand.mark, box, FitFontSize(brand.mark, box, r), Anchor::kMiddle, brand.color, 800);
}

// A white pill with the call to action, its right or left edge at `x`.
double Button(std::string& svg, const CreativeBrand& brand, double x, double y, double h,
              double size, bool right_aligned) {
  double label = EstimatedTextWidth(brand.cta, size);
  double pad = h / 2;
  double w = label + 2 * pad;
  double left = right_aligned ? x - w : x;
  svg += "<rect x=\"" + Num(left) + "\" y=\"" + Num(y) + "\" width=\"" + Num(w) + "\" height=\"" +
         Num(h) + "\" rx=\"" + Num(h / 2) + "\" fill=\"#ffffff\"/>";
  Box box{left + pad, y, label, h};
  Text(svg, brand.cta, box, FitFontSize(brand.cta, box, size), Anchor::kStart, brand.color);
  return w;
}

// Splits `text` at the space nearest its middle; one line if it has no space.
std::vector<std::string_view> TwoLines(std::string_view text) {
  size_t best = std::string_view::npos;
  for (size_t i = text.find(' '); i != std::string_view::npos; i = text.find(' ', i + 1)) {
    if (best == std::string_view::npos ||
        std::abs(static_cast<double>(i) - text.size() / 2.0) <
            std::abs(static_cast<double>(best) - text.size() / 2.0)) {
      best = i;
    }
  }
  if (best == std::string_view::npos) return {text};
  return {text.substr(0, best), text.substr(best + 1)};
}

void Landscape(std::string& svg, const CreativeBrand& brand) {
  Circle(svg, 560, 40, 150, "#ffffff", 0.08);
  Circle(svg, 620, 340, 90, "#ffffff", 0.06);
  Mark(svg, brand, 68, 64, 28);
  Box name{108, 44, 320, 40};
  Text(svg, brand.name, name, FitFontSize(brand.name, name, 28), Anchor::kStart, "#ffffff");
  // The line: one line when it fits at a large size, else two.
  const double kLineSize = 46;
  Box one{40, 150, 560, 60};
  std::vector<std::string_view> lines = {brand.line};
  if (FitFontSize(brand.line, one, kLineSize) < kLineSize) lines = TwoLines(brand.line);
  double size = kLineSize;
  for (size_t i = 0; i < lines.size(); ++i) {
    size = std::min(size, FitFontSize(lines[i], Box{40, 130.0 + 60 * i, 560, 60}, kLineSize));
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    Text(svg, lines[i], Box{40, 130.0 + 60 * i, 560, 60}, size, Anchor::kStart, "#ffffff");
  }
  Button(svg, brand, 40, 282, 48, 22, /*right_aligned=*/false);
}

void LongBanner(std::string& svg, const CreativeBrand& brand) {
  Circle(svg, 1380, 20, 160, "#ffffff", 0.08);
  Mark(svg, brand, 90, 90, 52);
  const double kButtonSize = 30;
  double button = EstimatedTextWidth(brand.cta, kButtonSize) + 72;
  Button(svg, brand, 1456 - 48, 54, 72, kButtonSize, /*right_aligned=*/true);
  Box name{172, 26, 420, 40};
  Text(svg, brand.name, name, FitFontSize(brand.name, name, 28), Anchor::kStart, "#ffffff", 600,
       0.85);
  Box line{172, 70, 1456 - 48 - button - 48 - 172, 80};
  Text(svg, brand.line, line, FitFontSize(brand.line, line, 54), Anchor::kStart, "#ffffff");
}

void ShortBanner(std::string& svg, const CreativeBrand& brand) {
  Circle(svg, 600, 20, 110, "#ffffff", 0.08);
  Mark(svg, brand, 56, 52, 24);
  Box name{92, 34, 320, 36};
  Text(svg, brand.name, name, FitFontSize(brand.name, name, 24), Anchor::kStart, "#ffffff");
  Box line{32, 88, 576, 48};
  Text(svg, brand.line, line, FitFontSize(brand.line, line, 34), Anchor::kStart, "#ffffff");
  Button(svg, brand, 640 - 32, 146, 40, 18, /*right_aligned=*/true);
}

void Logo(std::string& svg, const CreativeBrand& brand) {
  Box box{14, 24, 100, 80};
  Text(svg, brand.mark, box, FitFontSize(brand.mark, box, 64), Anchor::kMiddle, "#ffffff", 800);
}

}  // namespace

double EstimatedTextWidth(std::string_view text, double font_size) {
  double em = 0;
  for (char c : text) em += CharEm(static_cast<unsigned char>(c));
  return em * font_size;
}

CreativeSize CreativeSizeOf(CreativeKind kind) {
  switch (kind) {
    case CreativeKind::kLandscape:
      return {640, 360};
    case CreativeKind::kLongBanner:
      return {1456, 180};
    case CreativeKind::kShortBanner:
      return {640, 200};
    case CreativeKind::kLogo:
      return {128, 128};
  }
  return {640, 360};
}

std::string RenderCreativeSvg(const CreativeBrand& brand, CreativeKind kind) {
  std::string svg;
  Open(svg, brand, CreativeSizeOf(kind));
  switch (kind) {
    case CreativeKind::kLandscape:
      Landscape(svg, brand);
      break;
    case CreativeKind::kLongBanner:
      LongBanner(svg, brand);
      break;
    case CreativeKind::kShortBanner:
      ShortBanner(svg, brand);
      break;
    case CreativeKind::kLogo:
      Logo(svg, brand);
      break;
  }
  svg += "</svg>";
  return svg;
}

}  // namespace adserver::demo
