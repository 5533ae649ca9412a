#pragma once

// JSON <-> store record conversion for the admin API. Apply* read the fields present in a
// request body onto a record (all required fields when `creating`, any subset for PATCH),
// recording type errors under the JSON field names; *ToJson produce the response shapes.
// Module-private to admin/.

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "admin/detail/json_fields.h"
#include "store/records.h"

namespace adserver::admin::detail {

// Project slugs <-> ids, for campaign targeting and activity.
struct ProjectNames {
  std::unordered_map<std::string, store::Id> ids;
  std::unordered_map<store::Id, std::string> slugs;
  std::unordered_map<store::Id, store::Id> owners;  // project -> verified owner community
  explicit ProjectNames(const std::vector<store::ProjectRecord>& projects);
  // The slug of `id`, or its decimal id if the project is unknown.
  std::string SlugOf(store::Id id) const;
  // The community verified as the project's own, if any (issue 39).
  std::optional<store::Id> OwnerOf(store::Id id) const;
};

void ApplyPublisher(ObjectReader& r, bool creating, store::PublisherRecord& p);
Json PublisherToJson(const store::PublisherRecord& p);

// A key without its secret (the secret is added by the create handler, once).
Json ApiKeyToJson(const store::ApiKeyRecord& k);

void ApplyCommunity(ObjectReader& r, bool creating, store::CommunityRecord& c);
Json CommunityToJson(const store::CommunityRecord& c);

void ApplyProject(ObjectReader& r, bool creating, store::ProjectRecord& p);
Json ProjectToJson(const store::ProjectRecord& p);
// A search page's short form (?fields=summary): no contracts, their count instead.
Json ProjectSummaryToJson(const store::ProjectRecord& p);

// Resolves targeting slugs through `names`; an unknown slug is an error at its index.
void ApplyCampaign(ObjectReader& r, bool creating, const ProjectNames& names,
                   store::CampaignRecord& c);
Json CampaignToJson(const store::CampaignRecord& c, const ProjectNames& names);

void ApplyAd(ObjectReader& r, bool creating, store::AdRecord& a);
Json AdToJson(const store::AdRecord& a);

Json TimeToJson(int64_t unix_seconds);

}  // namespace adserver::admin::detail
