// Click tokens (/v1/click/{token}): events::OpenClick on untrusted text, and the round trip
// SealClick -> OpenClick on claims built from the input.

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "events/click_token.h"
#include "fuzz_support.h"

namespace adserver::fuzz {
namespace {

events::ClickClaims Claims(FuzzedDataProvider& in) {
  events::ClickClaims claims;
  for (uint8_t& b : claims.decision.bytes) b = in.ConsumeIntegral<uint8_t>();
  claims.publisher_id = in.ConsumeIntegral<int64_t>();
  claims.campaign_id = in.ConsumeIntegral<int64_t>();
  claims.ad_id = in.ConsumeIntegral<int64_t>();
  claims.served_at = in.ConsumeIntegral<int64_t>();
  claims.price = in.ConsumeIntegral<Micros>();
  claims.person = in.ConsumeIntegral<uint64_t>();
  claims.earlier_variant = in.ConsumeBool();
  claims.arm = in.ConsumeRandomLengthString(events::kMaxTokenArmBytes);
  claims.ad_unit_id = in.ConsumeRandomLengthString(events::kMaxTokenAdUnitBytes);
  return claims;
}

}  // namespace
}  // namespace adserver::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace adserver;
  using namespace adserver::fuzz;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<events::ClickClaims> opened = events::OpenClick(FixedKeys(), text);
  if (opened) {
    // Whatever opens re-seals to a token that opens to the same claims.
    Expect(events::OpenClick(FixedKeys(), events::SealClick(FixedKeys(), *opened)) == opened,
           "an opened token re-seals to the same claims");
  }

  FuzzedDataProvider in(data, size);
  events::ClickClaims claims = Claims(in);
  std::string token = "prefix/";
  events::SealClick(FixedKeys(), claims, token);
  std::string_view sealed = std::string_view(token).substr(7);
  Expect(token.starts_with("prefix/"), "SealClick appends");
  Expect(events::OpenClick(FixedKeys(), sealed) == claims, "a sealed token opens to its claims");
  if (!sealed.empty()) {
    // Any single changed character makes the token unopenable (authenticated).
    std::string tampered(sealed);
    size_t at = in.ConsumeIntegralInRange<size_t>(0, tampered.size() - 1);
    char replacement = tampered[at] == 'A' ? 'B' : 'A';
    tampered[at] = replacement;
    std::optional<events::ClickClaims> forged = events::OpenClick(FixedKeys(), tampered);
    Expect(!forged || *forged == claims, "a changed token never opens to other claims");
  }
  return 0;
}
