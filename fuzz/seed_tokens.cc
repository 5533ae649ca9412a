// Writes the token seeds of fuzz/corpus/identity_cookie and fuzz/corpus/click_token: real
// values sealed by the production code under fuzz_support.h's fixed keys. Run once by hand
// (docs/testing.md); its output is checked in:
//   build-san/fuzz/seed_tokens fuzz/corpus

#include <cstdio>
#include <fstream>
#include <string>

#include "common/address.h"
#include "events/click_token.h"
#include "fuzz_support.h"
#include "identity/wallet_token.h"

namespace adserver::fuzz {
namespace {

void Write(const std::string& path, const std::string& value) {
  std::ofstream(path, std::ios::binary) << value;
  std::printf("%s\n", path.c_str());
}

identity::IdentityToken Token(size_t wallets) {
  identity::IdentityToken token;
  for (size_t i = 0; i < token.id.size(); ++i) token.id[i] = static_cast<uint8_t>(i * 7);
  token.sealed_at = kNow;
  for (size_t i = 0; i < wallets; ++i) {
    identity::WalletLink link;
    link.wallet.bytes.fill(static_cast<uint8_t>(0x11 * (i + 1)));
    link.last_seen = kNow - static_cast<int64_t>(i) * 86400;
    token.wallets.push_back(link);
  }
  return token;
}

events::ClickClaims Claims(bool earlier, std::string ad_unit, std::string arm) {
  events::ClickClaims claims;
  for (size_t i = 0; i < claims.decision.bytes.size(); ++i) {
    claims.decision.bytes[i] = static_cast<uint8_t>(0xa0 + i);
  }
  claims.publisher_id = 3;
  claims.campaign_id = 7;
  claims.ad_id = 12;
  claims.served_at = kNow;
  claims.price = 250'000;
  claims.person = 0x0123456789abcdefULL;
  claims.earlier_variant = earlier;
  claims.ad_unit_id = std::move(ad_unit);
  claims.arm = std::move(arm);
  return claims;
}

}  // namespace
}  // namespace adserver::fuzz

int main(int argc, char** argv) {
  using namespace adserver;
  using namespace adserver::fuzz;
  if (argc != 2) {
    std::fprintf(stderr, "usage: seed_tokens CORPUS_DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  const identity::KeyRing& keys = FixedKeys();
  Write(dir + "/identity_cookie/cookie_1_wallet",
        identity::SealToken(keys, identity::TokenKind::kCookie, Token(1)));
  Write(dir + "/identity_cookie/cookie_3_wallets",
        identity::SealToken(keys, identity::TokenKind::kCookie, Token(3)));
  Write(dir + "/identity_cookie/local_id_2_wallets",
        identity::SealToken(keys, identity::TokenKind::kLocalId, Token(2)));
  Write(
      dir + "/identity_cookie/cookie_header",
      "other=1; adserver_id=" + identity::SealToken(keys, identity::TokenKind::kCookie, Token(2)) +
          "; adserver_id_p=x");
  Write(dir + "/click_token/current", events::SealClick(keys, Claims(false, "", "")));
  Write(dir + "/click_token/earlier_ad_unit_arm",
        events::SealClick(keys, Claims(true, "sidebar-1", "b")));
  return 0;
}
