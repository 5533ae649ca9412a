#pragma once

// The rules that make one project per real project out of third-party token lists (issue 40).
// Lists name the same token many ways ("USD Coin", "USD Coin (PoS)", "Bridged USDC (Stargate)")
// and list a protocol's receipt, LP, vault and debt tokens as if each were a project of its own
// ("Aave Ethereum USDC", "Uniswap V2 ETH-ENJ", "USDC yVault"). Pure functions of a list entry's
// name and ticker; registry_import.cc applies them. Every rule's examples are real entries of
// the lists tools/registry exports (tests/unit/ingest/registry_rules_test.cc).

#include <optional>
#include <string>
#include <string_view>

namespace adserver::ingest {

// A token list entry as one project: `name` is what the registry shows, `key` what it merges
// on (a slug), `symbol` its ticker without a bridge mark.
struct TokenIdentity {
  std::string name;
  std::string key;
  std::string symbol;
  // The key is not the list's own name's slug: the entry is a chain or bridge variant, or its
  // name ends in "Token". It then joins a project by key only when the tickers agree.
  bool variant = false;
};

// Chain and bridge variants of a token: a trailing parenthesis naming a chain or a bridge
// ("USD Coin (PoS)", "Axie Infinity Shard (Wormhole)", "Dai (ICE Bridge)"), a trailing
// " - Anyswap" or " on Polygon", a leading bridge ("Bridged USDC", "Binance-Peg Filecoin",
// "Multichain Bridged DAI") come off the name; a trailing " Token" comes off the key
// ("Aave Token" joins "Aave"). A name that would be left empty or only its ticker is kept whole.
TokenIdentity CanonicalToken(std::string_view name, std::string_view symbol);

// The ticker that variants share: upper case, without a bridge mark (".e", ".b", "_a", ".wh").
std::string CanonicalSymbol(std::string_view symbol);

// Whether two tickers can be the same token: equal canonical tickers, or either unknown.
bool SymbolsAgree(std::string_view a, std::string_view b);

// False when a list gives no name a person would search for: empty, or only its ticker.
bool HasHumanName(std::string_view name, std::string_view symbol);

// The protocol a receipt, LP, vault or debt token belongs to.
struct ProtocolRef {
  std::string_view slug;
  std::string_view name;
  std::string_view category;
};

// Aave aTokens and debt tokens, Compound cTokens, Uniswap, SushiSwap, PancakeSwap and Balancer
// pool shares, Curve LP tokens, Yearn vaults, Beefy vaults, Convex deposits, Pendle PT/YT/SY,
// Venus vTokens, Stargate pool shares, Superfluid Super Tokens, Synthetix synths, bZx iTokens.
// nullopt for every other token.
std::optional<ProtocolRef> DerivativeProtocol(std::string_view name, std::string_view symbol);

}  // namespace adserver::ingest
