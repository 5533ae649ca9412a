#pragma once

// Parsing and validation of the ad request body (spec 2.1, 2.4, compatibility.md).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/address.h"
#include "common/status.h"
#include "common/types.h"
#include "decision/engine.h"
#include "serve/options.h"

namespace adserver::serve {

struct AdRequest {
  decision::Variant variant = decision::Variant::kCurrent;
  // Distinct wallets (case-insensitive dedupe, first occurrence kept), in request order.
  std::vector<Address> wallets;
  // The wallets as the client spelled them (same order as `wallets`), echoed as
  // `walletAddress` by the earlier variant.
  std::vector<std::string> wallet_texts;
  // True when the body had a walletAddresses key (even an empty array).
  bool wallets_present = false;
  ImageFormat format = ImageFormat::kLandscape;
  std::optional<std::string> ad_unit_id;
  bool cookie_consent = false;  // current variant only
  // Earlier variant: whether the body had a `localId` key, and its string value if not null.
  bool local_id_present = false;
  std::optional<std::string> local_id;
  // Earlier variant: the localId bound to this request's wallets, echoed as `localId` in the
  // 200/404 body (set by identity resolution, serve/identity_binding.h).
  std::optional<std::string> bound_local_id;
};

// Parses a JSON body. Returns InvalidArgument with one FieldError per offending field
// ("walletAddresses[3]", "imageFormat", ...) for every problem found, or with field "body"
// when the body is not a JSON object. Unknown fields are ignored. Does not apply rules that
// depend on identity (whether an empty wallet list is acceptable): see the handler.
Result<AdRequest> ParseAdRequest(std::string_view body, decision::Variant variant,
                                 const ServeOptions& options);

}  // namespace adserver::serve
