#include "serve/identity_binding.h"

#include <optional>
#include <span>

#include "common/address.h"

namespace adserver::serve {
namespace {

using identity::TokenKind;

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

// Calls fn(value) for every cookie named `name` in the request's Cookie headers, in order,
// until it returns false (then returns false). Allocates nothing.
template <typename Fn>
bool ForEachCookieValue(const http::Request& request, std::string_view name, Fn fn) {
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
      if (!fn(value)) return false;
    }
  }
  return true;
}

// Serves the request from the identity's wallets. Their texts are only echoed by the earlier
// variant (`walletAddress`), so only it gets them.
void UseIdentityWallets(AdRequest& request, const identity::WalletLinks& links) {
  request.wallets.clear();
  request.wallet_texts.clear();
  request.wallets.reserve(links.size());
  for (const identity::WalletLink& link : links.view()) request.wallets.push_back(link.wallet);
  if (request.variant != Variant::kEarlier) return;
  request.wallet_texts.reserve(links.size());
  for (const identity::WalletLink& link : links.view()) {
    request.wallet_texts.emplace_back(FormatAddress(link.wallet));
  }
}

// At most this many identity cookie values are opened per request. A browser sends one per
// name (two when it also kept an older one); a header stuffed with values must not buy a
// decryption each.
constexpr int kMaxCookieValuesOpened = 4;

// The first cookie value (unpartitioned name first, then the twin) that opens as a live
// identity, among the first kMaxCookieValuesOpened; `carried` tells whether any cookie of
// either name was sent.
std::optional<identity::IdentityService::Opened> OpenCookie(
    const identity::IdentityService& identity, const http::Request& http_request, int64_t now,
    bool& carried) {
  std::optional<identity::IdentityService::Opened> opened;
  int tried = 0;
  for (std::string_view cookie : {std::string_view(identity.options().cookie_name),
                                  std::string_view(identity.twin_cookie_name())}) {
    bool more = ForEachCookieValue(http_request, cookie, [&](std::string_view value) {
      carried = true;
      if (++tried > kMaxCookieValuesOpened) return false;
      // A tampered, foreign, expired or fully erased value is no identity (nothing is made
      // from it): with wallets a new identity starts.
      opened = identity.Open(TokenKind::kCookie, value, now);
      return !opened;
    });
    if (!more) break;
  }
  return opened;
}

IdentityOutcome ResolveCookie(const identity::IdentityService& identity,
                              const http::Request& http_request, AdRequest& request, bool test_key,
                              int64_t now) {
  IdentityOutcome out;
  const identity::IdentityOptions& options = identity.options();
  bool carried = false;
  std::optional<identity::IdentityService::Opened> opened =
      OpenCookie(identity, http_request, now, carried);
  bool reseal = false;
  if (request.wallets.empty()) {
    if (!carried) return out;  // 400: wallets required unless the cookie is carried
    if (!opened) {
      out.no_fill = true;  // a cookie that is no identity: no error, and no identity made
      return out;
    }
    UseIdentityWallets(request, opened->token.wallets);
    if (test_key) return out;
    reseal = opened->reseal;
  } else {
    if (test_key) return out;
    if (!opened) {
      opened.emplace();
      opened->token.id = identity::IdentityService::NewId();
      reseal = true;
    }
    reseal |=
        identity::MergeWallets(opened->token.wallets, request.wallets, now, options.max_wallets) ||
        opened->reseal;
  }
  // Unchanged wallets: re-sealed (sliding Max-Age, fresh link times) once a refresh is due.
  reseal |= now - opened->token.sealed_at >= options.cookie_refresh_seconds;
  if (!reseal) return out;
  std::string sealed = identity.Seal(TokenKind::kCookie, opened->token, now);
  const std::string& name = options.cookie_name;
  out.set_cookies.push_back(SetCookie(name, sealed, options.cookie_max_age_seconds, false));
  out.set_cookies.push_back(
      SetCookie(identity.twin_cookie_name(), sealed, options.cookie_max_age_seconds, true));
  return out;
}

void ResolveLocalId(const identity::IdentityService& identity, AdRequest& request, bool test_key,
                    int64_t now) {
  std::optional<identity::IdentityService::Opened> opened;
  if (request.local_id) opened = identity.Open(TokenKind::kLocalId, *request.local_id, now);
  if (request.wallets.empty()) {
    // Only `walletAddresses: []` with a known id relaxes the 1-address minimum.
    if (!request.wallets_present || !opened) return;  // 400, or 404 WALLET_CACHE_VOID
    UseIdentityWallets(request, opened->token.wallets);
    // An id that still carries an erased or expired wallet is re-issued without it.
    request.bound_local_id = opened->reseal && !test_key
                                 ? identity.Seal(TokenKind::kLocalId, opened->token, now)
                                 : *request.local_id;
    return;
  }
  if (test_key) {
    if (opened) request.bound_local_id = *request.local_id;
    return;
  }
  bool reissue = !opened;
  if (!opened) {
    opened.emplace();
    opened->token.id = identity::IdentityService::NewId();
  }
  reissue |= identity::MergeWallets(opened->token.wallets, request.wallets, now,
                                    identity.options().max_wallets) ||
             opened->reseal;
  // The same id while its wallets stay the same (compatibility.md); a changed binding is a
  // new id, which the SDK stores in place of the old one.
  request.bound_local_id =
      reissue ? identity.Seal(TokenKind::kLocalId, opened->token, now) : *request.local_id;
}

}  // namespace

std::vector<std::string_view> CookieValues(const http::Request& request, std::string_view name) {
  std::vector<std::string_view> values;
  ForEachCookieValue(request, name, [&](std::string_view value) {
    values.push_back(value);
    return true;
  });
  return values;
}

IdentityOutcome ResolveIdentity(const identity::IdentityService* identity,
                                const http::Request& http_request, AdRequest& request,
                                bool test_key, int64_t now_seconds) {
  if (identity == nullptr) return {};
  if (request.variant == Variant::kCurrent) {
    if (!request.cookie_consent) return {};  // nothing is read or set without consent
    return ResolveCookie(*identity, http_request, request, test_key, now_seconds);
  }
  if (request.local_id_present) ResolveLocalId(*identity, request, test_key, now_seconds);
  return {};
}

}  // namespace adserver::serve
