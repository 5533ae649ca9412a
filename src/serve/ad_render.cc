#include "serve/ad_render.h"

#include <string_view>

#include "common/json_writer.h"

namespace adserver::serve {

std::vector<std::string> RenderAd(const decision::Ad& ad, const decision::Community* community) {
  using namespace std::string_view_literals;
  std::vector<std::string> pieces(kAdPieceCount);
  std::string& text = pieces[kAdText];
  // Ids are decimal digits: nothing to escape.
  text += "\"adId\":\""sv;
  text += ad.id_str;
  text += "\",\"headline\":"sv;
  AppendJsonString(text, ad.headline);
  text += ",\"content\":"sv;
  AppendJsonString(text, ad.content);
  text += ",\"ctaUrl\":"sv;
  AppendJsonString(pieces[kAdCtaUrl], ad.cta_url);
  std::string& label = pieces[kAdLabel];
  label += ",\"ctaLabel\":"sv;
  AppendJsonString(label, ad.cta_label);
  label += ",\"imageUrl\":"sv;
  for (size_t f = 0; f < ad.images.size(); ++f) {
    if (!ad.images[f].empty()) AppendJsonString(pieces[kAdImages + f], ad.images[f]);
  }
  std::string& tail = pieces[kAdCommunity];
  tail += ",\"communityName\":"sv;
  AppendJsonString(tail, community != nullptr ? community->name : std::string_view());
  tail += ",\"communityLogo\":"sv;
  AppendJsonString(tail, community != nullptr ? community->logo_url : std::string_view());
  tail += ",\"imageFormat\":\""sv;
  return pieces;
}

}  // namespace adserver::serve
