// The ad request body (POST /v1/ads and /api/ads): serve::ParseAdRequest for both API
// variants, into a fresh request and into one reused across inputs (as the handler reuses one
// per thread), which must agree.

#include <cstdint>
#include <string_view>

#include "fuzz_support.h"
#include "serve/ad_request.h"

namespace adserver::fuzz {
namespace {

bool SameRequest(const serve::AdRequest& a, const serve::AdRequest& b) {
  if (a.wallet_texts.size() != b.wallet_texts.size()) return false;
  for (size_t i = 0; i < a.wallet_texts.size(); ++i) {
    if (a.wallet_texts[i].view() != b.wallet_texts[i].view()) return false;
  }
  return a.variant == b.variant && a.wallets == b.wallets &&
         a.wallets_present == b.wallets_present && a.format == b.format &&
         a.ad_unit_id == b.ad_unit_id && a.cookie_consent == b.cookie_consent &&
         a.local_id_present == b.local_id_present && a.local_id == b.local_id;
}

void Parse(std::string_view body, serve::Variant variant) {
  static const serve::ServeOptions options;
  static serve::AdRequest reused;
  Result<serve::AdRequest> fresh = serve::ParseAdRequest(body, variant, options);
  Status status = serve::ParseAdRequest(body, variant, options, reused);
  Expect(fresh.ok() == status.ok(), "both overloads accept the same bodies");
  if (!status.ok()) {
    Expect(fresh.status().code() == status.code(), "same error code");
    Expect(fresh.status().details().size() == status.details().size(), "same field errors");
    return;
  }
  Expect(SameRequest(*fresh, reused), "a reused request parses like a fresh one");
  Expect(fresh->wallets.size() == fresh->wallet_texts.size(), "one text per wallet");
  for (size_t i = 0; i < fresh->wallets.size(); ++i) {
    Expect(ParseAddress(fresh->wallet_texts[i].view()) == fresh->wallets[i], "text is the wallet");
  }
  if (fresh->ad_unit_id) {
    Expect(fresh->ad_unit_id->size() <= options.max_ad_unit_id_bytes, "adUnitId limit");
  }
  if (fresh->local_id) {
    Expect(fresh->local_id->size() <= options.max_local_id_bytes, "localId limit");
  }
}

}  // namespace
}  // namespace adserver::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  adserver::fuzz::Parse(body, adserver::serve::Variant::kCurrent);
  adserver::fuzz::Parse(body, adserver::serve::Variant::kEarlier);
  return 0;
}
