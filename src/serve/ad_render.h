#pragma once

// What an ad's 200 body copies of the ad (spec 2.4), rendered once per catalog: the server sets
// decision::CatalogOptions::render_ad to RenderAd, so the snapshot publisher escapes every ad's
// text when it builds a catalog and a response only appends the pieces (AdResponseBody).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "decision/catalog.h"

namespace adserver::serve {

// The pieces of a rendered ad, in RenderAd's order. Between them a response writes what depends
// on the request: the click URL or kAdCtaUrl, the format's image (or "" / null), the format name.
enum AdPiece : size_t {
  kAdText,    // "adId":"…","headline":…,"content":…,"ctaUrl":
  kAdCtaUrl,  // the ad's ctaUrl literal (without a click redirect)
  kAdLabel,   // ,"ctaLabel":…,"imageUrl":
  kAdImages,  // one literal per format with an image (ImageFormat order); empty: none
  // ,"communityName":…,"communityLogo":…,"imageFormat":"
  kAdCommunity = kAdImages + kImageFormatsWithImage,
  kAdPieceCount,
};

// `ad`'s pieces in one buffer (one allocation per ad): the pieces' end offsets, then the
// pieces back to back. `community` is its campaign's (null: none, served as "").
std::string RenderAd(const decision::Ad& ad, const decision::Community* community);

// The pieces of a buffer RenderAd made (this process's own layout, never stored).
class RenderedAd {
 public:
  using Offsets = std::array<uint32_t, kAdPieceCount>;
  static constexpr size_t kHeaderBytes = sizeof(Offsets);

  // False for anything RenderAd did not make (an ad of a catalog built by hand: empty).
  static bool Valid(std::string_view rendered);
  // REQUIRES: Valid(rendered); `rendered` outlives this.
  explicit RenderedAd(std::string_view rendered);
  std::string_view piece(size_t p) const { return {data_ + begin(p), end(p) - begin(p)}; }

 private:
  uint32_t begin(size_t p) const { return p == 0 ? 0 : ends_[p - 1]; }
  uint32_t end(size_t p) const { return ends_[p]; }

  const char* data_;  // the first piece
  Offsets ends_;      // each piece's end, from data_
};

}  // namespace adserver::serve
