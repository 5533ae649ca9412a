#pragma once

// What an ad's 200 body copies of the ad (spec 2.4), rendered once per catalog: the server sets
// decision::CatalogOptions::render_ad to RenderAd, so the snapshot publisher escapes every ad's
// text when it builds a catalog and a response only appends the pieces (AdResponseBody).

#include <cstddef>
#include <string>
#include <vector>

#include "decision/catalog.h"

namespace adserver::serve {

// The pieces of a rendered ad, in RenderAd's order. Between them a response writes what depends
// on the request: the click URL or kCtaUrl, the format's image (or "" / null), the format name.
enum AdPiece : size_t {
  kAdText,    // "adId":"…","headline":…,"content":…,"ctaUrl":
  kAdCtaUrl,  // the ad's ctaUrl literal (without a click redirect)
  kAdLabel,   // ,"ctaLabel":…,"imageUrl":
  kAdImages,  // one literal per format with an image (ImageFormat order); empty: none
  kAdCommunity =
      kAdImages + kImageFormatsWithImage,  // ,"communityName":…,"communityLogo":…,"imageFormat":"
  kAdPieceCount,
};

// The pieces of `ad`, whose campaign belongs to `community` (null: none, served as "").
std::vector<std::string> RenderAd(const decision::Ad& ad, const decision::Community* community);

}  // namespace adserver::serve
