#include "ingest/registry_rules.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <vector>

#include "ingest/registry_import.h"

namespace adserver::ingest {
namespace {

std::string RuleLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string RuleUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool IStartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && RuleLower(s.substr(0, prefix.size())) == RuleLower(prefix);
}

bool IEndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         RuleLower(s.substr(s.size() - suffix.size())) == RuleLower(suffix);
}

bool IContains(std::string_view s, std::string_view part) {
  return RuleLower(s).find(RuleLower(part)) != std::string::npos;
}

// Trims and collapses runs of spaces ("Bridged Shell  Avalanche " -> "Bridged Shell Avalanche").
std::string RuleCollapse(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (space && (out.empty() || out.back() == ' ')) continue;
    out.push_back(space ? ' ' : c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::vector<std::string> RuleWords(std::string_view s) {
  std::vector<std::string> out;
  std::string word;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

// Words that name a chain or a bridge in the lists' variant names, lower case.
constexpr std::string_view kVariantWords[] = {
    "pos",       "wormhole",   "bridged", "bridge",   "multichain", "mutichain",  "anyswap",
    "stargate",  "celer",      "cbridge", "axelar",   "hyperlane",  "alphbridge", "canonical",
    "universal", "layerzero",  "oft",     "portal",   "synapse",    "across",     "allbridge",
    "omni",      "omnibridge", "hop",     "nomad",    "orbit",      "passport",   "crosschain",
    "ice",       "bsc",        "bnb",     "binance",  "base",       "lisk",       "pol",
    "polygon",   "matic",      "gnosis",  "xdai",     "zksync",     "arbitrum",   "arb1",
    "optimism",  "aurora",     "celo",    "sonic",    "soneium",    "blast",      "metis",
    "andromeda", "avalanche",  "fantom",  "linea",    "scroll",     "mantle",     "moonbeam",
    "harmony",   "cronos",     "kava",    "ethereum", "l2",         "unichain"};

bool IsVariantWord(std::string_view w) {
  return std::find(std::begin(kVariantWords), std::end(kVariantWords), w) !=
         std::end(kVariantWords);
}

// Every word of `s` names a chain or a bridge, or is a connective ("from", "native").
bool OnlyVariantWords(std::string_view s) {
  std::vector<std::string> words = RuleWords(s);
  if (words.empty()) return false;
  bool named = false;
  for (const std::string& w : words) {
    if (w == "from" || w == "native" || w == "on" || w == "labs" || w == "network") continue;
    if (!IsVariantWord(w)) return false;
    named = true;
  }
  return named;
}

bool AnyVariantWord(std::string_view s) {
  std::vector<std::string> words = RuleWords(s);
  return std::any_of(words.begin(), words.end(),
                     [](const std::string& w) { return IsVariantWord(w); });
}

// One suffix or prefix of a variant off `n`; false when none applies.
bool StripOnce(std::string& n, std::string_view symbol) {
  // "USD Coin (PoS)", "Dai (ICE Bridge)", "1INCH Token (Celo native bridge)"; "Balancer (BAL)".
  if (!n.empty() && n.back() == ')') {
    const size_t open = n.rfind('(');
    const std::string_view inner =
        open == std::string::npos ? std::string_view() : std::string_view(n).substr(open + 1);
    if (open != std::string::npos && open > 0 &&
        (AnyVariantWord(inner.substr(0, inner.size() - 1)) ||
         (!symbol.empty() && RuleLower(inner.substr(0, inner.size() - 1)) == RuleLower(symbol)))) {
      n = RuleCollapse(n.substr(0, open));
      return true;
    }
  }
  // "Frax - Anyswap", "USDC on Polygon", "Shell Avalanche" after a bridge prefix (below).
  for (std::string_view sep : {" - ", " on ", " from "}) {
    const size_t at = RuleLower(n).rfind(sep);
    if (at != std::string::npos && at > 0 && OnlyVariantWords(n.substr(at + sep.size()))) {
      n = RuleCollapse(n.substr(0, at));
      return true;
    }
  }
  // "Bridged USDC", "Multichain Bridged DAI", "Stargate Bridged Shell", "Axelar Wrapped USDC".
  for (std::string_view mark : {"Bridged ", "Wrapped "}) {
    const size_t at = RuleLower(n).find(RuleLower(mark));
    if (at == std::string::npos) continue;
    if (mark == "Wrapped " && !IStartsWith(n, "Axelar ")) continue;  // WETH is not ETH
    if (at == 0 || OnlyVariantWords(n.substr(0, at))) {
      n = RuleCollapse(n.substr(at + mark.size()));
      return true;
    }
  }
  // Not the bridge's own token: "Wormhole Token" W is not a bridged "Token".
  for (std::string_view prefix : {"Binance-Peg ", "Axelar ", "Multichain ", "Wormhole "}) {
    const std::string rest = RuleCollapse(n.substr(std::min(n.size(), prefix.size())));
    const std::string word = RuleLower(rest);
    if (IStartsWith(n, prefix) && !rest.empty() && word != "token" && word != "coin") {
      n = rest;
      return true;
    }
  }
  return false;
}

// The name's last word when it names a chain ("Shell Avalanche" after "Stargate Bridged").
void StripTrailingChain(std::string& n) {
  const size_t space = n.rfind(' ');
  if (space != std::string::npos && OnlyVariantWords(n.substr(space + 1))) n.resize(space);
}

}  // namespace

std::string CanonicalSymbol(std::string_view symbol) {
  std::string s = RuleUpper(RuleCollapse(symbol));
  for (std::string_view mark : {".E", ".B", "_A", "_B", "_E", ".WH", ".BSC", "_BSC"}) {
    if (s.size() > mark.size() && s.ends_with(mark)) {
      s.resize(s.size() - mark.size());
      break;
    }
  }
  return s;
}

bool SymbolsAgree(std::string_view a, std::string_view b) {
  return a.empty() || b.empty() || CanonicalSymbol(a) == CanonicalSymbol(b);
}

bool HasHumanName(std::string_view name, std::string_view symbol) {
  const std::string n = RuleCollapse(name);
  if (n.empty()) return false;
  return symbol.empty() || RuleLower(n) != RuleLower(RuleCollapse(symbol));
}

TokenIdentity CanonicalToken(std::string_view name, std::string_view symbol) {
  TokenIdentity out;
  out.symbol = RuleCollapse(symbol);
  const std::string original = RuleCollapse(name);
  std::string n = original;
  bool bridged_prefix = false;
  for (int i = 0; i < 4; ++i) {
    const std::string before = n;
    if (!StripOnce(n, out.symbol)) break;
    // A bridge prefix leaves the chain at the end: "Stargate Bridged Shell Avalanche".
    if (before.size() > n.size() && IContains(before, "Bridged ") && !IContains(n, "Bridged ")) {
      bridged_prefix = true;
    }
  }
  if (bridged_prefix) StripTrailingChain(n);
  // Left empty or only its ticker ("Axelar Wrapped USDC" -> "USDC"): the list's name says more.
  // ("Dai (ICE Bridge)" DAI -> "Dai" is a name.)
  if (n.empty() || (n == out.symbol && original != out.symbol)) {
    n = original;
  }
  out.name = n;
  std::string key_name = n;
  if (IEndsWith(key_name, " Token") && key_name.size() > 6) key_name.resize(key_name.size() - 6);
  out.key = SlugFromName(key_name);
  out.variant = out.key != SlugFromName(original);
  return out;
}

namespace {

// DerivativeProtocol's first rules, in order: lending markets' receipt tokens and AMM pool shares.
std::optional<ProtocolRef> LendingOrPoolShare(const std::string& name, const std::string& sym) {
  // Aave: "Aave Ethereum USDC" aEthUSDC, "Aave v3 WETH" AWETH, "Static Aave Arbitrum DAI"
  // STATAARBDAI, "Wrapped Aave Ethereum USDC" WAETHUSDC, "Aave Polygon Variable Debt USDC"
  // variableDebtPolUSDC; not "Aave Token" AAVE nor "Aavegotchi" (no space).
  if ((IStartsWith(name, "Aave ") || IStartsWith(name, "Static Aave ") ||
       IStartsWith(name, "Wrapped Aave ")) &&
      sym != "aave" &&
      (sym.starts_with("a") || sym.starts_with("wa") || sym.starts_with("stata") ||
       sym.starts_with("static") || sym.starts_with("variabledebt") ||
       sym.starts_with("stabledebt"))) {
    return ProtocolRef{"aave", "Aave", "lending"};
  }
  // Compound: "Compound USD Coin" cUSDC, "Compound 0x" CZRX; not "Compound 2.0" COMP2.0.
  if (IStartsWith(name, "Compound ") && (sym.starts_with("c") || sym.starts_with("tc")) &&
      !sym.starts_with("comp")) {
    return ProtocolRef{"compound", "Compound", "lending"};
  }
  // Uniswap pool shares: "Uniswap V2" UNI-V2, "Uniswap V2 ETH-ENJ" univ2ETHENJ, "Uniswap: Paxos
  // Gold" uniPAXG (V1).
  if ((IStartsWith(name, "Uniswap V2") || IStartsWith(name, "Uniswap V3") ||
       IStartsWith(name, "Uniswap: ")) &&
      sym.starts_with("uni")) {
    return ProtocolRef{"uniswap", "Uniswap", "dex"};
  }
  // "SushiSwap LP Token (WETH-USDC.e)" SLP, "SushiSwap USDCETH LP" SUSDCETH.
  if ((IStartsWith(name, "SushiSwap LP Token") && sym == "slp") ||
      (IStartsWith(name, "SushiSwap ") && IEndsWith(name, " LP"))) {
    return ProtocolRef{"sushiswap", "SushiSwap", "dex"};
  }
  // "Pancake LPs" Cake-LP.
  if (IStartsWith(name, "Pancake LPs") && sym == "cake-lp") {
    return ProtocolRef{"pancakeswap", "PancakeSwap", "dex"};
  }
  // Balancer pool tokens: "Balancer 50 USDC 50 WETH" B-50USDC-50WETH, "Balancer 3Pool BPT"
  // bpt3POOL; not "Balancer" BAL.
  if (IStartsWith(name, "Balancer ") &&
      (sym.starts_with("b-") || sym.starts_with("b_") || sym.starts_with("bpt") ||
       sym.starts_with("bb-") || sym.ends_with("-bpt") || IContains(name, "Pool Token"))) {
    return ProtocolRef{"balancer", "Balancer", "dex"};
  }
  return std::nullopt;
}

// The rest, in order: deposits, vaults, yield tokens, bridges' pools, synths.
std::optional<ProtocolRef> VaultOrSynth(const std::string& name, const std::string& sym) {
  // Convex deposits: "Convex CRV" cvxCRV; not "Convex Token" CVX.
  if (IStartsWith(name, "Convex ") && sym.starts_with("cvx") && sym != "cvx") {
    return ProtocolRef{"convex", "Convex Finance", "defi"};
  }
  // Curve pool tokens: "Curve.fi DAI/USDC/USDT" 3CRV, "Curve CRV-ETH" CRVCRVETH, "LP 3pool Curve"
  // 3CRV; not "Curve DAO Token" CRV nor the crvUSD stablecoin.
  // "Curve.fi Factory Plain Pool 2SGD" JSGD_XSGD_F names its pool without "crv";
  // "Curve_fi USDP_3Crv" USDP3CRV and "Curvefi Factory Plain Pool ibEURsEUR" spell it otherwise.
  if ((IStartsWith(name, "Curve.fi ") || IStartsWith(name, "Curve_fi ") ||
       IStartsWith(name, "Curvefi ") ||
       ((IStartsWith(name, "Curve ") || (IStartsWith(name, "LP ") && IEndsWith(name, " Curve"))) &&
        sym.find("crv") != std::string::npos)) &&
      sym != "crv" && sym != "crvusd" && !IContains(name, "Stablecoin") &&
      !IContains(name, " DAO")) {
    return ProtocolRef{"curve", "Curve", "dex"};
  }
  // Yearn vaults: "USDC yVault" YVUSDC.
  if (IEndsWith(name, " yVault") || (sym.starts_with("yv") && IContains(name, "yearn"))) {
    return ProtocolRef{"yearn", "Yearn", "defi"};
  }
  // Beefy vaults: "Moo Aave USDC" mooAaveUSDC; not the "MOO DENG" meme coin (case matters).
  if (name.starts_with("Moo ") && sym.starts_with("moo")) {
    return ProtocolRef{"beefy", "Beefy", "defi"};
  }
  // Pendle: "PT Ethena USDe 27NOV2025" PT-USDE-27NOV2025 (also YT-, SY-).
  if ((sym.starts_with("pt-") || sym.starts_with("yt-") || sym.starts_with("sy-")) &&
      (IStartsWith(name, "PT ") || IStartsWith(name, "YT ") || IStartsWith(name, "SY "))) {
    return ProtocolRef{"pendle", "Pendle", "defi"};
  }
  // Venus vTokens: "Venus BCH" vBCH; not "Venus Token" XVS nor "Venus Reward Token" VRT.
  if (IStartsWith(name, "Venus ") && sym.starts_with("v") && sym.size() > 1 && sym != "vrt" &&
      !IEndsWith(name, " Token")) {
    return ProtocolRef{"venus", "Venus", "lending"};
  }
  // Stargate pool shares: "Stargate Tether USD LP" saUSDT.
  if (IStartsWith(name, "Stargate ") && IEndsWith(name, " LP") && sym.starts_with("s")) {
    return ProtocolRef{"stargate", "Stargate", "bridge"};
  }
  // Superfluid Super Tokens: "Super AERO" AEROx, "Super Dai Stablecoin" DAIx; not "Super Grok".
  if (IStartsWith(name, "Super ") && sym.size() > 1 && sym.ends_with("x")) {
    return ProtocolRef{"superfluid", "Superfluid", "defi"};
  }
  // Synthetix synths: "Synth sUSD" sUSD, "Synth iDOT" iDOT; not "Synth Ai" SYAI.
  if (IStartsWith(name, "Synth ") && (sym.starts_with("s") || sym.starts_with("i")) &&
      !sym.starts_with("sy")) {
    return ProtocolRef{"synthetix", "Synthetix", "defi"};
  }
  // bZx (Fulcrum) iTokens and perpetuals: "bZx ETH iToken" iETH, "bZx Perpetual Long WBTC 2x".
  if (name.starts_with("bZx ")) return ProtocolRef{"bzx", "bZx", "lending"};
  return std::nullopt;
}

}  // namespace

std::optional<ProtocolRef> DerivativeProtocol(std::string_view raw_name,
                                              std::string_view raw_symbol) {
  const std::string name = RuleCollapse(raw_name);
  const std::string symbol = RuleCollapse(raw_symbol);
  const std::string sym = RuleLower(symbol);
  if (std::optional<ProtocolRef> p = LendingOrPoolShare(name, sym)) return p;
  return VaultOrSynth(name, sym);
}

}  // namespace adserver::ingest
