#pragma once

// Parsing and validation of the ad request body (spec 2.1, 2.4, compatibility.md).

#include <algorithm>
#include <array>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/address.h"
#include "common/status.h"
#include "common/types.h"
#include "decision/engine.h"
#include "serve/options.h"

namespace adserver::serve {

// The two API variants (spec 2): POST /v1/ads (current) and POST /api/ads (earlier).
enum class Variant : uint8_t { kCurrent, kEarlier };

// A wallet address as the client spelled it ("0x" and 40 hex digits, case kept), stored inline
// so that parsing 50 wallets allocates nothing per wallet.
class WalletText {
 public:
  WalletText() = default;
  // `text` must be 42 characters (a parsed address); longer text is cut.
  WalletText(std::string_view text) { Assign(text); }  // NOLINT(google-explicit-constructor)
  WalletText(const std::string& text) { Assign(text); }  // NOLINT(google-explicit-constructor)
  std::string_view view() const { return {chars_.data(), size_}; }
  operator std::string_view() const { return view(); }  // NOLINT(google-explicit-constructor)
  friend bool operator==(const WalletText& a, std::string_view b) { return a.view() == b; }
  friend std::ostream& operator<<(std::ostream& os, const WalletText& t) { return os << t.view(); }

 private:
  void Assign(std::string_view text) {
    size_ = std::min(text.size(), chars_.size());
    std::copy_n(text.data(), size_, chars_.data());
  }
  std::array<char, 42> chars_{};
  size_t size_ = 0;
};

struct AdRequest {
  Variant variant = Variant::kCurrent;
  // Distinct wallets (case-insensitive dedupe, first occurrence kept), in request order.
  std::vector<Address> wallets;
  // The wallets as the client spelled them (same order as `wallets`), echoed as
  // `walletAddress` by the earlier variant.
  std::vector<WalletText> wallet_texts;
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

  // ad_unit_id as a view (nullopt: none sent).
  std::optional<std::string_view> ad_unit() const {
    if (!ad_unit_id) return std::nullopt;
    return std::string_view(*ad_unit_id);
  }
};

// Parses a JSON body. Returns InvalidArgument with one FieldError per offending field
// ("walletAddresses[3]", "imageFormat", ...) for every problem found, or with field "body"
// when the body is not a JSON object. Unknown fields are ignored. Does not apply rules that
// depend on identity (whether an empty wallet list is acceptable): see the handler.
Result<AdRequest> ParseAdRequest(std::string_view body, Variant variant,
                                 const ServeOptions& options);
// The same into `out`, which is reset first but keeps its vectors' capacity, so that a caller
// reusing one AdRequest (the handler keeps one per thread) parses without allocating. On error
// `out` holds a partial request.
Status ParseAdRequest(std::string_view body, Variant variant, const ServeOptions& options,
                      AdRequest& out);

}  // namespace adserver::serve
