#include "serve/ad_request.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

namespace adserver::serve {
namespace {

// Spec 2.4 / 8: at most this many distinct addresses per request.
constexpr size_t kMaxWallets = 50;
// Per-element errors reported for walletAddresses; scanning stops at this many so that a
// 64 KiB array of junk costs a bounded amount of work and yields a readable answer.
constexpr size_t kMaxWalletElementErrors = 10;
// Initial capacity of each thread's parser: the route's body limit, so steady-state parsing
// never allocates.
constexpr size_t kParserCapacity = 64 * 1024;

constexpr std::string_view kFormatsCurrent = "LANDSCAPE, LONG_BANNER, SHORT_BANNER, NO_IMAGE";
constexpr std::string_view kFormatsEarlier = "LANDSCAPE, LONG_BANNER, SHORT_BANNER";

simdjson::dom::parser& ThreadParser() {
  thread_local simdjson::dom::parser parser;
  // If this fails, the first parse allocates (or reports MEMALLOC, answered as malformed).
  thread_local bool preallocated = parser.allocate(kParserCapacity) == simdjson::SUCCESS;
  (void)preallocated;
  return parser;
}

Status MalformedBody(std::string message) {
  return InvalidArgumentError("Malformed JSON body", {FieldError{"body", std::move(message)}});
}

// The known top-level members; with duplicate keys the last occurrence wins.
struct Members {
  std::optional<simdjson::dom::element> wallets;
  std::optional<simdjson::dom::element> image_format;
  std::optional<simdjson::dom::element> ad_unit_id;
  std::optional<simdjson::dom::element> cookie_consent;  // current variant only
  std::optional<simdjson::dom::element> local_id;        // earlier variant only
};

Members CollectMembers(simdjson::dom::object object, Variant variant) {
  Members m;
  for (simdjson::dom::key_value_pair field : object) {
    if (field.key == "walletAddresses") {
      m.wallets = field.value;
    } else if (field.key == "imageFormat") {
      m.image_format = field.value;
    } else if (field.key == "adUnitId") {
      m.ad_unit_id = field.value;
    } else if (field.key == "cookieConsent" && variant == Variant::kCurrent) {
      m.cookie_consent = field.value;
    } else if (field.key == "localId" && variant == Variant::kEarlier) {
      m.local_id = field.value;
    }
  }
  return m;
}

std::string ElementField(size_t i) { return "walletAddresses[" + std::to_string(i) + "]"; }

// Distinct addresses seen so far in a request: open addressing over at most kMaxWallets
// entries, on the stack, so deduplicating 50 wallets is linear and allocates nothing.
class SeenWallets {
 public:
  // True when `a` was not seen before (and remembers it).
  bool Insert(const Address& a) {
    uint64_t h;
    std::memcpy(&h, a.bytes.data(), sizeof h);
    for (size_t i = (h * 0x9E3779B97F4A7C15ULL) >> 57;; i = (i + 1) % kSlots) {
      if (slots_[i] == nullptr) {
        slots_[i] = &a;
        return true;
      }
      if (*slots_[i] == a) return false;
    }
  }

 private:
  static constexpr size_t kSlots = 128;  // > 2 x kMaxWallets: short probe sequences
  std::array<const Address*, kSlots> slots_{};
};

void ParseWallets(simdjson::dom::element value, AdRequest& out, std::vector<FieldError>& errors) {
  out.wallets_present = true;
  simdjson::dom::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) {
    errors.push_back({"walletAddresses", "must be an array of strings"});
    return;
  }
  // The set points into out.wallets, so it must not reallocate: reserve the most it can hold.
  out.wallets.reserve(kMaxWallets);
  out.wallet_texts.reserve(std::min(array.size(), kMaxWallets));
  SeenWallets seen;
  size_t element_errors = 0;
  size_t i = 0;
  for (simdjson::dom::element element : array) {
    std::string_view text;
    if (element.get_string().get(text) != simdjson::SUCCESS) {
      std::string field = ElementField(i);
      errors.push_back({field, field + " must be a string"});
      ++element_errors;
    } else if (std::optional<Address> address = ParseAddress(text); !address) {
      std::string field = ElementField(i);
      errors.push_back(
          {field, field + " is not a valid EVM address (0x followed by 40 hex characters)"});
      ++element_errors;
    } else {
      if (out.wallets.size() == kMaxWallets) {
        // A 51st address is an error only if it is new.
        if (std::find(out.wallets.begin(), out.wallets.end(), *address) == out.wallets.end()) {
          errors.push_back({"walletAddresses", "at most 50 distinct addresses are allowed"});
          return;
        }
      } else {
        out.wallets.push_back(*address);
        if (seen.Insert(out.wallets.back())) {
          out.wallet_texts.emplace_back(text);
        } else {
          out.wallets.pop_back();
        }
      }
    }
    if (element_errors == kMaxWalletElementErrors) return;
    ++i;
  }
}

void ParseImageFormat(std::optional<simdjson::dom::element> value, Variant variant, AdRequest& out,
                      std::vector<FieldError>& errors) {
  if (!value || value->is_null()) {
    errors.push_back({"imageFormat", "imageFormat is required"});
    return;
  }
  std::string_view name;
  std::optional<ImageFormat> format;
  if (value->get_string().get(name) == simdjson::SUCCESS) format = adserver::ParseImageFormat(name);
  if (!format || (variant == Variant::kEarlier && *format == ImageFormat::kNoImage)) {
    std::string message = "imageFormat must be one of ";
    message += variant == Variant::kCurrent ? kFormatsCurrent : kFormatsEarlier;
    errors.push_back({"imageFormat", std::move(message)});
    return;
  }
  out.format = *format;
}

// An optional string member (null = absent) of at most `max_bytes` bytes.
void ParseOptionalString(std::optional<simdjson::dom::element> value, std::string_view field,
                         size_t max_bytes, std::optional<std::string>& out,
                         std::vector<FieldError>& errors) {
  if (!value || value->is_null()) return;
  std::string_view text;
  if (value->get_string().get(text) != simdjson::SUCCESS) {
    errors.push_back({std::string(field), std::string(field) + " must be a string or null"});
    return;
  }
  if (text.size() > max_bytes) {
    errors.push_back({std::string(field), std::string(field) + " must be at most " +
                                              std::to_string(max_bytes) + " bytes"});
    return;
  }
  out.emplace(text);
}

void ParseCookieConsent(std::optional<simdjson::dom::element> value, AdRequest& out,
                        std::vector<FieldError>& errors) {
  if (!value || value->is_null()) return;
  bool consent = false;
  if (value->get_bool().get(consent) != simdjson::SUCCESS) {
    errors.push_back({"cookieConsent", "cookieConsent must be a boolean"});
    return;
  }
  out.cookie_consent = consent;
}

// A fresh request for `variant` that keeps the capacity of `out`'s vectors.
void Reset(AdRequest& out, Variant variant) {
  std::vector<Address> wallets = std::move(out.wallets);
  std::vector<WalletText> wallet_texts = std::move(out.wallet_texts);
  wallets.clear();
  wallet_texts.clear();
  out = AdRequest{
      .variant = variant, .wallets = std::move(wallets), .wallet_texts = std::move(wallet_texts)};
}

}  // namespace

Result<AdRequest> ParseAdRequest(std::string_view body, Variant variant,
                                 const ServeOptions& options) {
  AdRequest out;
  ADS_RETURN_IF_ERROR(ParseAdRequest(body, variant, options, out));
  return out;
}

Status ParseAdRequest(std::string_view body, Variant variant, const ServeOptions& options,
                      AdRequest& out) {
  Reset(out, variant);
  if (body.empty()) return MalformedBody("body is empty; expected a JSON object");
  simdjson::dom::element root;
  if (ThreadParser().parse(body.data(), body.size()).get(root) != simdjson::SUCCESS) {
    return MalformedBody("body is not valid JSON");
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    return MalformedBody("body must be a JSON object");
  }
  Members members = CollectMembers(object, variant);

  std::vector<FieldError> errors;
  if (members.wallets) ParseWallets(*members.wallets, out, errors);
  ParseImageFormat(members.image_format, variant, out, errors);
  ParseOptionalString(members.ad_unit_id, "adUnitId", options.max_ad_unit_id_bytes, out.ad_unit_id,
                      errors);
  if (variant == Variant::kEarlier) {
    out.local_id_present = members.local_id.has_value();
    ParseOptionalString(members.local_id, "localId", options.max_local_id_bytes, out.local_id,
                        errors);
  } else {
    ParseCookieConsent(members.cookie_consent, out, errors);
  }
  if (!errors.empty()) return InvalidArgumentError("Invalid request", std::move(errors));
  return OkStatus();
}

}  // namespace adserver::serve
