#include "ingest/registry_rules.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

// Every example is a real entry (name, ticker) of a list tools/registry exports.
namespace adserver::ingest {
namespace {

struct Variant {
  const char* name;
  const char* symbol;
  const char* canonical_name;
  const char* key;
};

TEST(CanonicalTokenTest, ChainAndBridgeVariantsShareTheTokensKey) {
  const std::vector<Variant> cases = {
      {"USD Coin (PoS)", "USDC", "USD Coin", "usd-coin"},  // Polygon, ledger
      {"Axie Infinity Shard (Wormhole)", "AXS", "Axie Infinity Shard", "axie-infinity-shard"},
      {"Dai (ICE Bridge)", "DAI", "Dai", "dai"},                          // 1delta
      {"BNB (ICE Bridge)", "BNB", "BNB (ICE Bridge)", "bnb-ice-bridge"},  // only its ticker left
      {"Elevate Bridged DAI (Metis Andromeda)", "DAI", "Elevate Bridged DAI",
       "elevate-bridged-dai"},  // "Elevate" names no bridge we know
      {"Axelar Wrapped USDC", "USDC", "Axelar Wrapped USDC",
       "axelar-wrapped-usdc"},                                       // -> "USDC": only its ticker
      {"1INCH Token (bridged)", "1INCH_E", "1INCH Token", "1inch"},  // ledger
      {"1INCH Token (Celo native bridge)", "1INCH", "1INCH Token", "1inch"},
      {"Frax - Anyswap", "FRAX_A", "Frax", "frax"},  // ledger
      {"Frax Share (bridged)", "FXS_A", "Frax Share", "frax-share"},
      {"Frax Finance(Canonical)", "FRAX", "Frax Finance", "frax-finance"},
      {"Binance-Peg Filecoin", "FIL", "Filecoin", "filecoin"},  // ledger, BSC
      {"Binance-Peg Axie Infinity Shard Token", "AXS", "Axie Infinity Shard Token",
       "axie-infinity-shard"},
      {"Bridged Curve DAO Token  Stargate ", "CRV", "Curve DAO Token", "curve-dao"},  // 1delta
      {"Stargate Bridged Shell  Avalanche ", "SHELL", "Shell", "shell"},
      {"Balancer (PoS)", "BAL", "Balancer", "balancer"},
      {"Balancer (BAL)", "BAL", "Balancer", "balancer"},  // its ticker in brackets
      {"Aave Token", "AAVE", "Aave Token", "aave"},       // joins Aave
  };
  for (const Variant& c : cases) {
    TokenIdentity id = CanonicalToken(c.name, c.symbol);
    EXPECT_EQ(id.name, c.canonical_name) << c.name;
    EXPECT_EQ(id.key, c.key) << c.name;
  }
}

TEST(CanonicalTokenTest, OtherParenthesesAndWrappedTokensStayTheirOwn) {
  for (auto [name, symbol] : std::vector<std::tuple<const char*, const char*>>{
           {"0xGasless (old)", "$0XGAS_"},                     // an old version, not a variant
           {"AMD (Ondo Tokenized)", "AMDON"},                  // a tokenized stock
           {"1inch Liquidity Pool (ETH-DAI)", "1LP-ETH-DAI"},  // a pool
           {"Wrapped Ether", "WETH"},                          // WETH is not ETH
           {"Uniswap", "UNI"},
           {"UNCL on xDai on BSC", "UNCL"}}) {  // stripped, only its ticker would be left
    TokenIdentity id = CanonicalToken(name, symbol);
    EXPECT_EQ(id.name, name);
    EXPECT_FALSE(id.variant) << name;
  }
  // The bridge's own token, not a bridged "Token": kept whole, keyed like the bridge.
  TokenIdentity wormhole = CanonicalToken("Wormhole Token", "W");
  EXPECT_EQ(wormhole.name, "Wormhole Token");
  EXPECT_EQ(wormhole.key, "wormhole");
  EXPECT_TRUE(CanonicalToken("USD Coin (PoS)", "USDC").variant);
  EXPECT_TRUE(CanonicalToken("Chainlink Token", "LINK").variant);  // key "chainlink"
}

TEST(CanonicalTokenTest, TickersAgreeWithoutTheirBridgeMark) {
  EXPECT_EQ(CanonicalSymbol("USDC.e"), "USDC");  // "Bridged USDC (Stargate)"
  EXPECT_EQ(CanonicalSymbol("1INCH_E"), "1INCH");
  EXPECT_EQ(CanonicalSymbol("FRAX_A"), "FRAX");
  EXPECT_EQ(CanonicalSymbol("ARTH.BSC"), "ARTH");  // "ARTH Valuecoin (BSC)"
  EXPECT_EQ(CanonicalSymbol("cake"), "CAKE");
  EXPECT_TRUE(SymbolsAgree("USDC.e", "USDC"));
  EXPECT_TRUE(SymbolsAgree("", "USDC"));          // a protocol's project has no ticker of its own
  EXPECT_FALSE(SymbolsAgree("U1INCH", "1INCH"));  // "1inch (Universal)": another token
}

TEST(HasHumanNameTest, AnEntryThatOnlyRepeatsItsTickerHasNone) {
  EXPECT_FALSE(HasHumanName("", "USDC"));
  EXPECT_FALSE(HasHumanName("USDC", "USDC"));  // SwapKit gives tickers only
  EXPECT_FALSE(HasHumanName("0dog", "0DOG"));  // ledger
  EXPECT_FALSE(HasHumanName(" aave ", "AAVE"));
  EXPECT_TRUE(HasHumanName("Aave", "AAVE.e"));
  EXPECT_TRUE(HasHumanName("0xMonero", "0XMR"));  // 1delta
  EXPECT_TRUE(HasHumanName("Chainlink Token", "LINK"));
  EXPECT_TRUE(HasHumanName("Tether USD", ""));
}

struct Derivative {
  const char* name;
  const char* symbol;
  const char* protocol;  // nullptr: a token of its own
};

TEST(DerivativeProtocolTest, ReceiptLpVaultAndDebtTokensBelongToTheirProtocol) {
  const std::vector<Derivative> cases = {
      {"Aave Ethereum USDC", "AETHUSDC", "aave"},  // ledger
      {"Aave v3 WETH", "AWETH", "aave"},           // 1delta
      {"Aave interest bearing USDC", "aUSDC", "aave"},
      {"Static Aave Arbitrum DAI", "STATAARBDAI", "aave"},
      {"Wrapped Aave Ethereum USDC", "WAETHUSDC", "aave"},
      {"Aave AMM Market WBTC", "AAMMWBTC", "aave"},
      {"Aave Token", "AAVE", nullptr},  // Aave's own token: a token, keyed "aave" above
      {"Aavegotchi GHST Token", "GHST", nullptr},
      {"Compound USD Coin", "cUSDC", "compound"},
      {"Compound 0x", "CZRX", "compound"},
      {"Compound 2.0", "COMP2.0", nullptr},
      {"Uniswap V2", "UNI-V2", "uniswap"},
      {"Uniswap V2 ETH-ENJ", "univ2ETHENJ", "uniswap"},
      {"Uniswap: Paxos Gold", "uniPAXG", "uniswap"},
      {"SushiSwap LP Token (WETH-USDC.e)", "SLP", "sushiswap"},
      {"SushiSwap USDCETH LP", "SUSDCETH", "sushiswap"},
      {"SushiSwap", "SUSHI", nullptr},
      {"Pancake LPs", "CAKE-LP", "pancakeswap"},
      {"PancakeSwap Token", "CAKE", nullptr},
      {"Balancer 50 USDC 50 WETH", "B-50USDC-50WETH", "balancer"},
      {"Balancer 3Pool BPT", "bpt3POOL", "balancer"},
      {"Balancer", "BAL", nullptr},
      {"Convex CRV", "cvxCRV", "convex"},
      {"Convex Token", "CVX", nullptr},
      {"Curve.fi DAI/USDC/USDT", "3CRV", "curve"},
      {"Curve CRV-ETH", "CRVCRVETH", "curve"},
      {"Curve.fi Factory Plain Pool 2SGD", "JSGD_XSGD_F", "curve"},
      {"Curve_fi USDP_3Crv", "USDP3CRV", "curve"},
      {"Curvefi Factory Plain Pool ibEURsEUR", "IBEURSEUR", "curve"},
      {"LP 3pool Curve", "3CRV", "curve"},
      {"Curve DAO Token", "CRV", nullptr},
      {"Curve.Fi USD Stablecoin", "crvUSD", nullptr},
      {"USDC yVault", "YVUSDC", "yearn"},
      {"Moo Aave USDC", "MOOAAVEUSDC", "beefy"},
      {"MOO DENG", "MOODENG", nullptr},  // a meme coin
      {"PT Ethena USDe 27NOV2025", "PT-USDE-27NOV2025", "pendle"},
      {"Venus BCH", "vBCH", "venus"},
      {"Venus Reward Token", "VRT", nullptr},
      {"Venus XVS", "XVS", nullptr},
      {"Stargate Tether USD LP", "saUSDT", "stargate"},
      {"Stargate Finance", "STG", nullptr},
      {"Super AERO", "AEROx", "superfluid"},
      {"Super Grok", "SGROK", nullptr},
      {"Synth sUSD", "sUSD", "synthetix"},
      {"Synth Ai", "SYAI", nullptr},
      {"bZx ETH iToken", "iETH", "bzx"},
      {"Wrapped Ether", "WETH", nullptr},
  };
  for (const Derivative& c : cases) {
    std::optional<ProtocolRef> p = DerivativeProtocol(c.name, c.symbol);
    if (c.protocol == nullptr) {
      EXPECT_FALSE(p.has_value()) << c.name << " -> " << (p ? std::string(p->slug) : "");
    } else {
      ASSERT_TRUE(p.has_value()) << c.name;
      EXPECT_EQ(p->slug, c.protocol) << c.name;
    }
  }
}

}  // namespace
}  // namespace adserver::ingest
