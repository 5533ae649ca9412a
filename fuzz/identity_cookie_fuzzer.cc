// The identity cookie and localId: identity::UnsealToken on untrusted text (as the ad handlers
// call it on a Cookie header or a localId), serve::CookieValues on the Cookie header, and the
// round trip SealToken -> UnsealToken on a token built from the input.

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "http/message.h"
#include "identity/wallet_token.h"
#include "serve/identity_binding.h"

namespace adserver::fuzz {
namespace {

// Ten years: seed tokens sealed at kNow keep opening.
constexpr int64_t kMaxAge = 10LL * 365 * 24 * 60 * 60;

void Unseal(std::string_view value) {
  for (auto kind : {identity::TokenKind::kCookie, identity::TokenKind::kLocalId}) {
    std::optional<identity::IdentityToken> token =
        identity::UnsealToken(FixedKeys(), kind, value, kNow, kMaxAge);
    if (token) Expect(!token->wallets.empty(), "an opened token has a wallet");
  }
}

void CookieHeader(std::string_view header) {
  http::Request request;
  request.headers.push_back({"Cookie", header});
  request.headers.push_back({"cookie", header.substr(header.size() / 2)});
  for (std::string_view value : serve::CookieValues(request, "adserver_id")) Unseal(value);
}

// Seals a token built from the input and checks that it opens to the same token.
void RoundTrip(FuzzedDataProvider& in) {
  identity::IdentityToken token;
  for (uint8_t& b : token.id) b = in.ConsumeIntegral<uint8_t>();
  token.sealed_at = kNow - in.ConsumeIntegralInRange<int64_t>(0, kMaxAge);
  size_t n = in.ConsumeIntegralInRange<size_t>(1, identity::kMaxWalletsPerIdentity);
  for (size_t i = 0; i < n && in.remaining_bytes() > 0; ++i) {
    identity::WalletLink link;
    for (uint8_t& b : link.wallet.bytes) b = in.ConsumeIntegral<uint8_t>();
    link.last_seen = token.sealed_at - in.ConsumeIntegral<uint32_t>();
    if (!token.wallets.Contains(link.wallet)) token.wallets.push_back(link);
  }
  if (token.wallets.empty()) return;
  auto kind = in.ConsumeBool() ? identity::TokenKind::kCookie : identity::TokenKind::kLocalId;
  std::string sealed = identity::SealToken(FixedKeys(), kind, token);
  Expect(sealed.size() <= identity::MaxTokenChars(token.wallets.size()), "token size bound");
  std::optional<identity::IdentityToken> opened =
      identity::UnsealToken(FixedKeys(), kind, sealed, kNow, kMaxAge);
  Expect(opened.has_value(), "a sealed token opens");
  Expect(opened->id == token.id && opened->sealed_at == token.sealed_at, "id and time kept");
  Expect(opened->key_id == FixedKeys().active().id, "sealed under the active key");
  Expect(opened->wallets.size() == token.wallets.size(), "wallet count kept");
  for (size_t i = 0; i < token.wallets.size(); ++i) {
    Expect(opened->wallets[i].wallet == token.wallets[i].wallet, "wallet kept");
    Expect(opened->wallets[i].last_seen == token.wallets[i].last_seen, "last_seen kept");
  }
  auto other = kind == identity::TokenKind::kCookie ? identity::TokenKind::kLocalId
                                                    : identity::TokenKind::kCookie;
  Expect(!identity::UnsealToken(FixedKeys(), other, sealed, kNow, kMaxAge),
         "a token never opens as the other kind");
}

}  // namespace
}  // namespace adserver::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace adserver::fuzz;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Unseal(text);
  CookieHeader(text);
  FuzzedDataProvider in(data, size);
  RoundTrip(in);
  return 0;
}
