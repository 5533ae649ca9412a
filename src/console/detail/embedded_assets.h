#pragma once

#include <span>
#include <string_view>

namespace adserver::console::detail {

// One file of src/console/assets (or Debian's Chart.js), compiled into the binary.
struct EmbeddedAsset {
  std::string_view name;  // file name under /console/, e.g. "app.js" (or "openapi.yaml")
  std::string_view body;
};

// Every embedded asset, in the order CMake listed them. Static storage; never changes.
std::span<const EmbeddedAsset> EmbeddedAssets();

}  // namespace adserver::console::detail
