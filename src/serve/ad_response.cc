#include "serve/ad_response.h"

#include <utility>

#include "common/json_writer.h"

namespace adserver::serve {
namespace {

constexpr std::string_view kJsonContentType = "application/json; charset=utf-8";

// `literal` (pre-escaped by Catalog::BuildIndexes) or, for a catalog built without it, `text`
// escaped now.
void AppendLiteral(std::string& out, const std::string& literal, std::string_view text) {
  if (!literal.empty()) {
    out += literal;
  } else {
    AppendJsonString(out, text);
  }
}

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
  const decision::Community* community = decision.community;
  bool earlier = IsEarlier(request.variant);
  const auto f = static_cast<size_t>(request.format);
  const bool has_image = request.format != ImageFormat::kNoImage && !ad.images[f].empty();
  std::string body;
  body.reserve(256 + ad.json.headline.size() + ad.json.content.size() + ad.json.cta_url.size() +
               ad.json.cta_label.size() + (has_image ? ad.json.images[f].size() : 0) +
               (community ? community->json_name.size() + community->json_logo_url.size() : 0) +
               (request.ad_unit_id ? request.ad_unit_id->size() : 0) + click_url.size());
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
  body += "\",\"adId\":\""sv;
  body += ad.id_str;
  body += "\",\"headline\":"sv;
  AppendLiteral(body, ad.json.headline, ad.headline);
  body += ",\"content\":"sv;
  AppendLiteral(body, ad.json.content, ad.content);
  body += ",\"ctaUrl\":"sv;
  if (!click_url.empty()) {
    AppendJsonString(body, click_url);
  } else {
    AppendLiteral(body, ad.json.cta_url, ad.cta_url);
  }
  body += ",\"ctaLabel\":"sv;
  AppendLiteral(body, ad.json.cta_label, ad.cta_label);
  body += ",\"imageUrl\":"sv;
  if (has_image) {
    AppendLiteral(body, ad.json.images[f], ad.images[f]);
  } else {
    body += earlier ? "\"\""sv : "null"sv;
  }
  body += ",\"communityName\":"sv;
  if (community != nullptr) {
    AppendLiteral(body, community->json_name, community->name);
  } else {
    body += "\"\""sv;
  }
  body += ",\"communityLogo\":"sv;
  if (community != nullptr) {
    AppendLiteral(body, community->json_logo_url, community->logo_url);
  } else {
    body += "\"\""sv;
  }
  body += ",\"imageFormat\":\""sv;
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
