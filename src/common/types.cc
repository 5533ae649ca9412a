#include "common/types.h"

namespace adserver {

std::string_view ImageFormatName(ImageFormat f) {
  switch (f) {
    case ImageFormat::kLandscape: return "LANDSCAPE";
    case ImageFormat::kLongBanner: return "LONG_BANNER";
    case ImageFormat::kShortBanner: return "SHORT_BANNER";
    case ImageFormat::kNoImage: return "NO_IMAGE";
  }
  return "";
}

std::optional<ImageFormat> ParseImageFormat(std::string_view name) {
  for (int i = 0; i < kImageFormatCount; ++i) {
    auto f = static_cast<ImageFormat>(i);
    if (ImageFormatName(f) == name) return f;
  }
  return std::nullopt;
}

std::string_view CampaignStatusName(CampaignStatus s) {
  switch (s) {
    case CampaignStatus::kDraft: return "draft";
    case CampaignStatus::kActive: return "active";
    case CampaignStatus::kPaused: return "paused";
    case CampaignStatus::kEnded: return "ended";
  }
  return "";
}

std::optional<CampaignStatus> ParseCampaignStatus(std::string_view name) {
  for (auto s : {CampaignStatus::kDraft, CampaignStatus::kActive, CampaignStatus::kPaused,
                 CampaignStatus::kEnded}) {
    if (CampaignStatusName(s) == name) return s;
  }
  return std::nullopt;
}

std::string_view AdStatusName(AdStatus s) { return s == AdStatus::kActive ? "active" : "paused"; }

std::optional<AdStatus> ParseAdStatus(std::string_view name) {
  if (name == "active") return AdStatus::kActive;
  if (name == "paused") return AdStatus::kPaused;
  return std::nullopt;
}

std::string_view PricingModelName(PricingModel m) {
  switch (m) {
    case PricingModel::kCpm: return "CPM";
    case PricingModel::kCpc: return "CPC";
    case PricingModel::kCpa: return "CPA";
  }
  return "";
}

std::optional<PricingModel> ParsePricingModel(std::string_view name) {
  for (auto m : {PricingModel::kCpm, PricingModel::kCpc, PricingModel::kCpa}) {
    if (PricingModelName(m) == name) return m;
  }
  return std::nullopt;
}

}  // namespace adserver
