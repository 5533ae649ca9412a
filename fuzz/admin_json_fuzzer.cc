// Admin API JSON bodies (POST/PATCH /admin/v1/{publishers,communities,projects,campaigns,ads}):
// the body parsed as the API parses it, decoded onto each record type with the API's readers
// (admin/detail/records_json), validated (ingest/validation) and written back as the API answers
// it. A body that decodes without errors must decode again from its own answer to the same
// answer (what a client reads back it can send again).

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "admin/detail/json_fields.h"
#include "admin/detail/records_json.h"
#include "fuzz_support.h"
#include "ingest/validation.h"

namespace adserver::fuzz {
namespace {

using admin::detail::FieldErrors;
using admin::detail::Json;
using admin::detail::ObjectReader;

const admin::detail::ProjectNames& Names() {
  static const admin::detail::ProjectNames names = [] {
    store::ProjectRecord usdc;
    usdc.id = 1;
    usdc.slug = "usdc";
    store::ProjectRecord weth;
    weth.id = 2;
    weth.slug = "weth";
    return admin::detail::ProjectNames({usdc, weth});
  }();
  return names;
}

// One resource: how a body is applied, validated and answered.
template <typename Record>
struct Resource {
  std::function<void(ObjectReader&, bool, Record&)> apply;
  std::function<Status(const Record&)> validate;
  std::function<Json(const Record&)> to_json;

  // Decodes `body` onto `record` like the API's Crud::Decode (without the store lookups).
  bool Decode(const Json& body, bool creating, Record& record) const {
    FieldErrors errors;
    ObjectReader reader(body, "", errors);
    apply(reader, creating, record);
    errors.AddAll(validate(record));
    Status status = errors.ToStatus();
    Expect(errors.empty() == status.ok(), "no errors is ok");
    return status.ok();
  }

  void Run(const Json& body) const {
    for (bool creating : {true, false}) {
      Record record;
      if (!Decode(body, creating, record)) continue;
      Json answer = to_json(record);
      admin::detail::JsonResponse(creating ? 201 : 200, answer);
      Record again;
      if (!Decode(answer, /*creating=*/true, again)) continue;
      Expect(to_json(again) == answer, "an answer decodes to itself");
    }
  }
};

void RunAll(const Json& body) {
  namespace d = admin::detail;
  Resource<store::PublisherRecord>{d::ApplyPublisher, ingest::ValidatePublisher, d::PublisherToJson}
      .Run(body);
  Resource<store::CommunityRecord>{d::ApplyCommunity, ingest::ValidateCommunity, d::CommunityToJson}
      .Run(body);
  Resource<store::ProjectRecord>{d::ApplyProject, ingest::ValidateProject, d::ProjectToJson}.Run(
      body);
  Resource<store::CampaignRecord>{
      [](ObjectReader& r, bool creating, store::CampaignRecord& c) {
        d::ApplyCampaign(r, creating, Names(), c);
      },
      ingest::ValidateCampaign,
      [](const store::CampaignRecord& c) { return d::CampaignToJson(c, Names()); }}
      .Run(body);
  Resource<store::AdRecord>{d::ApplyAd, ingest::ValidateAd, d::AdToJson}.Run(body);
}

}  // namespace
}  // namespace adserver::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using adserver::admin::detail::Json;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // As the API reads a body (admin_api.cc ReadJsonObject): no exceptions, objects only.
  Json body = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) return 0;
  adserver::fuzz::RunAll(body);
  return 0;
}
