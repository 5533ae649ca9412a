#include "serve/ad_render.h"

#include <cstring>

#include "common/json_writer.h"

namespace adserver::serve {
namespace {

constexpr size_t kHeader = RenderedAd::kHeaderBytes;

}  // namespace

std::string RenderAd(const decision::Ad& ad, const decision::Community* community) {
  using namespace std::string_view_literals;
  RenderedAd::Offsets ends{};
  std::string out(kHeader, '\0');
  auto end_piece = [&](size_t p) { ends[p] = static_cast<uint32_t>(out.size() - kHeader); };
  // Ids are decimal digits: nothing to escape.
  out += "\"adId\":\""sv;
  out += ad.id_str;
  out += "\",\"headline\":"sv;
  AppendJsonString(out, ad.headline);
  out += ",\"content\":"sv;
  AppendJsonString(out, ad.content);
  out += ",\"ctaUrl\":"sv;
  end_piece(kAdText);
  AppendJsonString(out, ad.cta_url);
  end_piece(kAdCtaUrl);
  out += ",\"ctaLabel\":"sv;
  AppendJsonString(out, ad.cta_label);
  out += ",\"imageUrl\":"sv;
  end_piece(kAdLabel);
  for (size_t f = 0; f < ad.images.size(); ++f) {
    if (!ad.images[f].empty()) AppendJsonString(out, ad.images[f]);
    end_piece(kAdImages + f);
  }
  out += ",\"communityName\":"sv;
  AppendJsonString(out, community != nullptr ? community->name : std::string_view());
  out += ",\"communityLogo\":"sv;
  AppendJsonString(out, community != nullptr ? community->logo_url : std::string_view());
  out += ",\"imageFormat\":\""sv;
  end_piece(kAdCommunity);
  std::memcpy(out.data(), ends.data(), kHeader);
  out.shrink_to_fit();
  return out;
}

bool RenderedAd::Valid(std::string_view rendered) {
  if (rendered.size() < kHeader) return false;
  Offsets ends;
  std::memcpy(ends.data(), rendered.data(), kHeader);
  uint32_t previous = 0;
  for (uint32_t end : ends) {
    if (end < previous) return false;
    previous = end;
  }
  return previous == rendered.size() - kHeader;
}

RenderedAd::RenderedAd(std::string_view rendered) : data_(rendered.data() + kHeader) {
  std::memcpy(ends_.data(), rendered.data(), kHeader);
}

}  // namespace adserver::serve
