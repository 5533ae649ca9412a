#pragma once

// Hand-made catalogs for decision tests.

#include <string>
#include <utility>
#include <vector>

#include "decision/catalog.h"

namespace adserver::decision::testing {

inline constexpr int64_t kCommunityA = 10;
inline constexpr int64_t kCommunityB = 11;

// A catalog with one publisher (index 0) and communities kCommunityA and kCommunityB. Tests add
// campaigns and ads, then call Finish() to compute the ad lists and indexes.
class TestCatalog {
 public:
  TestCatalog() {
    catalog.publishers.push_back(
        {.id = 1, .name = "pub", .allowed_origins = {}, .blocked_communities = {}});
    catalog.communities.push_back({.id = kCommunityA, .name = "A", .logo_url = "https://a/l.png"});
    catalog.communities.push_back({.id = kCommunityB, .name = "B", .logo_url = "https://b/l.png"});
  }

  // Adds an active campaign targeting `projects` with impression value `value`.
  Campaign& AddCampaign(int64_t id, std::vector<uint32_t> projects, double value = 1000,
                        int64_t community_id = kCommunityA) {
    Campaign c;
    c.id = id;
    c.id_str = std::to_string(id);
    c.community_id = community_id;
    c.community = community_id == kCommunityA ? 0 : 1;
    c.value_micros = value;
    c.target_projects = std::move(projects);
    catalog.campaigns.push_back(std::move(c));
    return catalog.campaigns.back();
  }

  // Adds an ad with creatives in every image format to the campaign with store id
  // `campaign_id`.
  Ad& AddAd(int64_t campaign_id, int64_t id, uint32_t weight = 1, std::string content = "Hi") {
    Ad ad;
    ad.id = id;
    ad.id_str = std::to_string(id);
    for (Index c = 0; c < catalog.campaigns.size(); ++c) {
      if (catalog.campaigns[c].id == campaign_id) ad.campaign = c;
    }
    ad.headline = "Headline " + std::to_string(id);
    ad.content_chars = static_cast<uint32_t>(content.size());  // ASCII in tests
    ad.content = std::move(content);
    ad.cta_url = "https://example.com/" + std::to_string(id);
    ad.cta_label = "Go";
    ad.images = {"https://img/l.png", "https://img/lb.png", "https://img/sb.png"};
    ad.weight = weight;
    catalog.ads.push_back(std::move(ad));
    return catalog.ads.back();
  }

  const Catalog& Finish() {
    catalog.BuildAdLists();
    catalog.BuildIndexes();
    return catalog;
  }

  const Publisher& publisher() const { return catalog.publishers[0]; }

  Catalog catalog;
};

}  // namespace adserver::decision::testing
