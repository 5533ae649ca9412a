#include "serve/identity_binding.h"

#include <optional>
#include <span>

#include "common/address.h"
#include "identity/sealed_cookie.h"

namespace adserver::serve {
namespace {

using store::IdentityKey;
using store::IdentityKind;

constexpr std::string_view kPartitionedSuffix = "_p";

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
    if (x != y) return false;
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string SetCookie(std::string_view name, std::string_view value, int64_t max_age,
                      bool partitioned) {
  std::string c;
  c.reserve(160);
  c.append(name).append("=").append(value);
  c.append("; Max-Age=").append(std::to_string(max_age));
  c.append("; Path=/; Secure; HttpOnly; SameSite=None");
  if (partitioned) c.append("; Partitioned");
  return c;
}

// A localId is 32 lower- or upper-case hex characters (128 bits); anything else is unknown.
std::optional<IdentityKey> ParseLocalId(std::string_view text) {
  if (text.size() != 32) return std::nullopt;
  IdentityKey key{};
  for (size_t i = 0; i < 32; ++i) {
    char c = text[i];
    int v = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (v < 0) return std::nullopt;
    key[i / 2] = static_cast<uint8_t>(key[i / 2] * 16 + v);
  }
  return key;
}

void UseIdentityWallets(AdRequest& request, std::vector<Address> wallets) {
  request.wallet_texts.clear();
  request.wallet_texts.reserve(wallets.size());
  for (const Address& a : wallets) request.wallet_texts.emplace_back(FormatAddress(a));
  request.wallets = std::move(wallets);
}

IdentityOutcome ResolveCookie(identity::IdentityService& identity,
                              const http::Request& http_request, AdRequest& request, bool test_key,
                              int64_t now) {
  IdentityOutcome out;
  const identity::IdentityOptions& options = identity.options();
  const std::string& name = options.cookie_name;
  std::string twin = name + std::string(kPartitionedSuffix);
  bool carried = false;
  std::optional<IdentityKey> key;
  // The unpartitioned cookie first, then the partitioned twin; the first live identity wins.
  for (const std::string& cookie : {name, twin}) {
    for (std::string_view value : CookieValues(http_request, cookie)) {
      carried = true;
      if (key) continue;
      std::optional<identity::Unsealed> opened =
          identity::UnsealIdentity(identity.keys(), value, now, options.cookie_max_age_seconds);
      // An erased or expired identity is not revived: with wallets a new one is made.
      if (opened && identity.graph().Wallets(IdentityKind::kCookie, opened->id, now)) {
        key = opened->id;
      }
    }
  }
  if (request.wallets.empty()) {
    if (!carried) return out;  // 400: wallets required unless the cookie is carried
    std::optional<std::vector<Address>> wallets;
    if (key) wallets = identity.graph().Wallets(IdentityKind::kCookie, *key, now);
    if (!wallets) {
      out.no_fill = true;  // a cookie that is no identity: no error, and no identity made
      return out;
    }
    UseIdentityWallets(request, std::move(*wallets));
    if (test_key) return out;
    identity.graph().Touch(IdentityKind::kCookie, *key, now);
  } else {
    if (test_key) return out;
    if (!key) key = identity::IdentityService::NewKey();
    identity.graph().Link(IdentityKind::kCookie, *key, request.wallets, now);
  }
  std::string sealed = identity::SealIdentity(identity.keys(), *key, now);
  out.set_cookies.push_back(SetCookie(name, sealed, options.cookie_max_age_seconds, false));
  out.set_cookies.push_back(SetCookie(twin, sealed, options.cookie_max_age_seconds, true));
  return out;
}

void ResolveLocalId(identity::IdentityService& identity, AdRequest& request, bool test_key,
                    int64_t now) {
  std::optional<IdentityKey> key;
  if (request.local_id) key = ParseLocalId(*request.local_id);
  bool known = key && identity.graph().Wallets(IdentityKind::kLocal, *key, now).has_value();
  if (request.wallets.empty()) {
    // Only `walletAddresses: []` with a known id relaxes the 1-address minimum.
    if (!request.wallets_present || !known) return;  // 400, or 404 WALLET_CACHE_VOID
    std::optional<std::vector<Address>> wallets =
        identity.graph().Wallets(IdentityKind::kLocal, *key, now);
    if (!wallets) return;
    UseIdentityWallets(request, std::move(*wallets));
    if (!test_key) identity.graph().Touch(IdentityKind::kLocal, *key, now);
    request.bound_local_id = HexEncode(key->data(), key->size());
    return;
  }
  if (test_key) {
    if (known) request.bound_local_id = HexEncode(key->data(), key->size());
    return;
  }
  if (!known) key = identity::IdentityService::NewKey();
  identity.graph().Link(IdentityKind::kLocal, *key, request.wallets, now);
  request.bound_local_id = HexEncode(key->data(), key->size());
}

}  // namespace

std::vector<std::string_view> CookieValues(const http::Request& request, std::string_view name) {
  std::vector<std::string_view> values;
  for (const http::Header& header : request.headers) {
    if (!IEquals(header.name, "Cookie")) continue;
    std::string_view rest = header.value;
    while (!rest.empty()) {
      size_t semi = rest.find(';');
      std::string_view pair = Trim(rest.substr(0, semi));
      rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
      size_t eq = pair.find('=');
      if (eq == std::string_view::npos || Trim(pair.substr(0, eq)) != name) continue;
      std::string_view value = Trim(pair.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      values.push_back(value);
    }
  }
  return values;
}

IdentityOutcome ResolveIdentity(identity::IdentityService* identity,
                                const http::Request& http_request, AdRequest& request,
                                bool test_key, int64_t now_seconds) {
  if (identity == nullptr) return {};
  if (request.variant == decision::Variant::kCurrent) {
    if (!request.cookie_consent) return {};  // nothing is read or set without consent
    return ResolveCookie(*identity, http_request, request, test_key, now_seconds);
  }
  if (request.local_id_present) ResolveLocalId(*identity, request, test_key, now_seconds);
  return {};
}

}  // namespace adserver::serve
