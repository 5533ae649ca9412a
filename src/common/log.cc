#include "common/log.h"

namespace adserver::log {

void SetLevel(std::string_view level) {
  spdlog::set_level(spdlog::level::from_str(std::string(level)));
}

}  // namespace adserver::log
