#include "http/detail/request_id.h"

#include <cstdint>
#include <random>

#include "common/splitmix64.h"

namespace adserver::http::detail {

bool IsValidRequestId(std::string_view value) {
  if (value.empty() || value.size() > kMaxRequestIdBytes) return false;
  for (char c : value) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.' || c == ':' || c == '/' || c == '+' || c == '=' ||
              c == '@';
    if (!ok) return false;
  }
  return true;
}

void MakeRequestId(char* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  thread_local uint64_t state = [] {
    std::random_device device;
    return (uint64_t{device()} << 32) ^ device();
  }();
  // SplitMix64: a bijection of the counter, so one thread never repeats an id.
  uint64_t z = SplitMix64Next(state);
  for (int i = static_cast<int>(kMadeRequestIdBytes) - 1; i >= 0; --i, z >>= 4) {
    out[i] = kHex[z & 0xF];
  }
}

}  // namespace adserver::http::detail
