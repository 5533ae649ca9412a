#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace adserver {

// Image formats of spec 2.3. The numeric values index per-format arrays.
enum class ImageFormat : uint8_t { kLandscape = 0, kLongBanner = 1, kShortBanner = 2, kNoImage = 3 };
inline constexpr int kImageFormatCount = 4;
// Formats that carry an image (all but NO_IMAGE).
inline constexpr int kImageFormatsWithImage = 3;

std::string_view ImageFormatName(ImageFormat f);
// Exact, case-sensitive match of the spec names ("LANDSCAPE", ...).
std::optional<ImageFormat> ParseImageFormat(std::string_view name);

enum class CampaignStatus : uint8_t { kDraft, kActive, kPaused, kEnded };
std::string_view CampaignStatusName(CampaignStatus s);  // "draft", "active", "paused", "ended"
std::optional<CampaignStatus> ParseCampaignStatus(std::string_view name);

enum class AdStatus : uint8_t { kActive, kPaused };
std::string_view AdStatusName(AdStatus s);  // "active", "paused"
std::optional<AdStatus> ParseAdStatus(std::string_view name);

enum class PricingModel : uint8_t { kCpm, kCpc, kCpa };
std::string_view PricingModelName(PricingModel m);  // "CPM", "CPC", "CPA"
std::optional<PricingModel> ParsePricingModel(std::string_view name);

// Money is integer micro-units of the network's currency (1.0 = 1'000'000).
using Micros = int64_t;
inline constexpr Micros kMicrosPerUnit = 1'000'000;

}  // namespace adserver
