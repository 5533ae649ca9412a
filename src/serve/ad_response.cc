#include "serve/ad_response.h"

#include <utility>

#include "common/json_writer.h"
#include "serve/ad_render.h"

namespace adserver::serve {
namespace {

constexpr std::string_view kJsonContentType = "application/json; charset=utf-8";

}  // namespace

http::Response JsonResponse(int status, std::string body) {
  http::Response response;
  response.status = status;
  response.SetHeader("Cache-Control", "no-store");
  response.SetHeader("Content-Type", kJsonContentType);
  response.body = std::move(body);
  return response;
}

http::Response ErrorAnswer(int status, std::string_view message,
                           const std::vector<FieldError>& details) {
  return JsonResponse(status, http::ErrorBody(message, details));
}

http::Response NoAdEarlier(std::optional<std::string_view> local_id) {
  std::string body;
  body.reserve(80);
  JsonObjectWriter writer(body);
  writer.String("error", "No ad available").Raw("details", "[]");
  if (local_id) writer.String("localId", *local_id);
  writer.Close();
  return JsonResponse(404, std::move(body));
}

http::Response NoFill(Variant variant) {
  if (IsEarlier(variant)) return NoAdEarlier(std::nullopt);
  http::Response response;
  response.status = 204;
  response.SetHeader("Cache-Control", "no-store");
  return response;
}

void AddCors(http::Response& response, const http::Request& request, Variant variant,
             bool expose_to_origin) {
  if (IsEarlier(variant)) {
    response.SetHeader("Access-Control-Allow-Origin", "*");
    return;
  }
  if (!request.HasHeader("Origin")) return;
  if (expose_to_origin) {
    response.SetHeader("Access-Control-Allow-Origin", request.Header("Origin"));
    response.SetHeader("Access-Control-Allow-Credentials", "true");
  }
  response.SetHeader("Vary", "Origin");
}

std::string AdResponseBody(const AdRequest& request, const decision::Decision& decision,
                           std::string_view click_url) {
  // string_view literals: appending a `const char*` makes std::string::append call strlen.
  using namespace std::string_view_literals;
  const decision::Ad& ad = *decision.ad;
  // A catalog the server built carries the pieces; one built by hand (tests) is rendered now.
  std::string rendered_now;
  if (!RenderedAd::Valid(ad.rendered)) rendered_now = RenderAd(ad, decision.community);
  const RenderedAd pieces(rendered_now.empty() ? ad.rendered : rendered_now);
  bool earlier = IsEarlier(request.variant);
  const auto f = static_cast<size_t>(request.format);
  const std::string_view image = request.format != ImageFormat::kNoImage
                                     ? pieces.piece(kAdImages + f)
                                     : std::string_view();
  std::string body;
  body.reserve(96 + decision.campaign->id_str.size() + pieces.piece(kAdText).size() +
               pieces.piece(kAdCtaUrl).size() + pieces.piece(kAdLabel).size() + image.size() +
               pieces.piece(kAdCommunity).size() +
               (request.ad_unit_id ? request.ad_unit_id->size() : 0) + click_url.size() +
               (request.bound_local_id ? request.bound_local_id->size() : 0));
  body += '{';
  if (earlier) {
    size_t matched =
        decision.matched_wallet < request.wallet_texts.size() ? decision.matched_wallet : 0;
    body += "\"walletAddress\":"sv;
    AppendJsonString(body, request.wallet_texts[matched]);
    body += ',';
  }
  // Ids are decimal digits: nothing to escape.
  body += "\"campaignId\":\""sv;
  body += decision.campaign->id_str;
  body += "\","sv;
  body += pieces.piece(kAdText);
  if (!click_url.empty()) {
    AppendJsonString(body, click_url);
  } else {
    body += pieces.piece(kAdCtaUrl);
  }
  body += pieces.piece(kAdLabel);
  if (!image.empty()) {
    body += image;
  } else {
    body += earlier ? "\"\""sv : "null"sv;
  }
  body += pieces.piece(kAdCommunity);
  body += ImageFormatName(request.format);
  body += '"';
  if (!earlier && request.ad_unit_id) {
    body += ",\"adUnitId\":"sv;
    AppendJsonString(body, *request.ad_unit_id);
  }
  if (earlier && request.bound_local_id) {
    body += ",\"localId\":"sv;
    AppendJsonString(body, *request.bound_local_id);
  }
  body += '}';
  return body;
}

}  // namespace adserver::serve
