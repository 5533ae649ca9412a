// Writes the installed project lists to out/ as JSON documents `adserver projects import` reads:
// token lists and MetaMask's contract map as they are, protocol address books (JavaScript modules)
// in adserver's address-book shape {"projects": [{slug, name, category, logoURI, contracts}]}.
// Every document names the package and version it came from (`source`; an address book per
// project), and each token may carry a `category`. Only permissively licensed packages are
// used: each package's licence is read at export time (package.json, else its LICENSE file) and
// a package whose licence is not MIT, ISC, Apache-2.0, BSD or CC0 is refused by name (exit 1).
// Non-EVM entries, testnets, native coin placeholders and malformed addresses are dropped.
// Output is deterministic for a given package-lock.json and packs.json. Run after
// `npm ci --ignore-scripts` (.npmrc skips optional peer deps: viem) and `node fetch-packs.js`.
// Files are numbered in import order: protocol address books first (a protocol claims its
// contracts before token lists do), then curated token lists, then the large aggregated ones.
'use strict';
const fs = require('fs');
const path = require('path');
const {checkedSource} = require('./licence');

const out = path.join(__dirname, 'out');
fs.mkdirSync(out, { recursive: true });
const isAddress = (v) => typeof v === 'string' && /^0x[0-9a-fA-F]{40}$/.test(v);
const write = (name, doc) => fs.writeFileSync(path.join(out, name), JSON.stringify(doc));
const nm = (p) => path.join(__dirname, 'node_modules', p);
const pk = (p) => path.join(__dirname, 'packs', p);
const readJson = (p) => JSON.parse(fs.readFileSync(p, 'utf8'));
const sortedDir = (p) => fs.readdirSync(p).sort();
const isUnderlying = (t) => (t.tags || []).includes('underlying');
// "name@version" of an installed (node_modules) or fetched (packs) package, licence checked.
const source = (name) => checkedSource(fs.existsSync(pk(name)) ? pk(name) : nm(name));

// Uniswap protocol contracts per chain (MIT): routers, factories, position managers.
function uniswap() {
  const { CHAIN_TO_ADDRESSES_MAP } = require('@uniswap/sdk-core');
  const contracts = [];
  for (const [chainId, book] of Object.entries(CHAIN_TO_ADDRESSES_MAP)) {
    for (const v of Object.values(book)) {
      if (isAddress(v)) contracts.push({ chainId: Number(chainId), address: v });
    }
  }
  return {
    slug: 'uniswap',
    name: 'Uniswap',
    category: 'dex',
    source: source('@uniswap/sdk-core'),
    contracts
  };
}

// Aave protocol contracts (MIT): every address in every market/governance book with a CHAIN_ID,
// except the assets it lists (an UNDERLYING, an e-mode's assets, the token list's underlying
// tokens): those are their issuers' projects, not Aave's.
function aave() {
  const aaveList = readJson(nm('@bgd-labs/aave-address-book/tokenlist.json'));
  const book = require('@bgd-labs/aave-address-book');
  const underlying = new Set(
      aaveList.tokens.filter(isUnderlying).map((t) => `${t.chainId}:${t.address.toLowerCase()}`));
  const found = [];
  const walk = (obj, chainId, depth) => {
    if (depth > 6 || obj === null || typeof obj !== 'object') return;
    for (const [k, v] of Object.entries(obj)) {
      if (k === 'E_MODES') continue;  // lists of assets by e-mode category
      if (k === 'UNDERLYING') {
        if (isAddress(v)) underlying.add(`${chainId}:${v.toLowerCase()}`);
      } else if (isAddress(v)) {
        found.push({chainId, address: v});
      } else {
        walk(v, chainId, depth + 1);
      }
    }
  };
  for (const mod of Object.values(book)) {
    if (mod && typeof mod === 'object' && Number.isInteger(mod.CHAIN_ID)) walk(mod, mod.CHAIN_ID, 0);
  }
  for (const t of aaveList.tokens) {
    if (!isUnderlying(t)) found.push({chainId: t.chainId, address: t.address});
  }
  const contracts = found.filter((c) => !underlying.has(`${c.chainId}:${c.address.toLowerCase()}`));
  return {
    slug: 'aave',
    name: 'Aave',
    category: 'lending',
    source: source('@bgd-labs/aave-address-book'),
    contracts
  };
}


// A real contract address: not the zero address nor the 0xeeee… native-coin placeholder.
const isContract = (v) => isAddress(v) && !/^0x(0{40}|e{40})$/i.test(v);
const toChainId = (v) => (/^[0-9]+$/.test(String(v)) && Number(v) > 0 ? Number(v) : null);
const httpLogo = (v) => (typeof v === 'string' && /^https?:\/\//.test(v) ? v : undefined);
// A Uniswap-schema token list from {chainId, address, name, symbol, decimals, logoURI} entries.
function tokenList(name, src, entries) {
  const tokens = [];
  for (const t of entries) {
    const chainId = toChainId(t.chainId);
    if (!chainId || TESTNETS.has(chainId) || !isContract(t.address)) continue;
    if (typeof t.name !== 'string' || !t.name.trim()) continue;
    const token = { chainId, address: t.address, name: t.name.trim() };
    if (typeof t.symbol === 'string') token.symbol = t.symbol;
    if (Number.isInteger(t.decimals)) token.decimals = t.decimals;
    const logo = httpLogo(t.logoURI);
    if (logo) token.logoURI = logo;
    if (typeof t.category === 'string') token.category = t.category;
    tokens.push(token);
  }
  return {name, source: src, tokens};
}
// An address-book project from [chainId, address] pairs (deduplicated, order kept).
function project(slug, name, category, src, pairs) {
  const seen = new Set();
  const contracts = [];
  for (const [c, a] of pairs) {
    const chainId = toChainId(c);
    if (!chainId || TESTNETS.has(chainId) || !isContract(a)) continue;
    const key = `${chainId}:${a.toLowerCase()}`;
    if (seen.has(key)) continue;
    seen.add(key);
    contracts.push({ chainId, address: a });
  }
  return {slug, name, category, source: src, contracts};
}

// Beefy's address book (MIT): tokens on 40+ EVM chains.
function beefyTokens() {
  const { addressBook } = require('@beefyfinance/blockchain-addressbook');
  const entries = [];
  for (const chain of Object.keys(addressBook).sort()) {
    entries.push(...Object.values(addressBook[chain].tokens || {}));
  }
  return tokenList(
      'Beefy address book tokens', source('@beefyfinance/blockchain-addressbook'), entries);
}

// MyEtherWallet's ethereum-lists tokens as forked by erc20-token-list (Apache-2.0): Ethereum mainnet.
function ethereumListsTokens() {
  const map = readJson(nm('erc20-token-list/tokens.json'));
  const entries = Object.keys(map).sort().map((k) => {
    const t = map[k];
    return { chainId: 1, address: t.address, name: t.name, symbol: t.symbol, decimals: t.decimals,
             logoURI: t.logo && t.logo.src };
  });
  return tokenList('ethereum-lists ERC-20 tokens', source('erc20-token-list'), entries);
}

// Superfluid's extended token list (MIT): Super Tokens and their underlying tokens.
const superfluidTokens = () => tokenList(
    'Superfluid extended', source('@superfluid-finance/tokenlist'),
    readJson(nm('@superfluid-finance/tokenlist/dist/superfluid.extended.tokenlist.json')).tokens);

// Yodl's generated token list (MIT); it spells the logo field logoUri.
const yodlTokens = () => tokenList(
    'Yodl tokens', source('@yodlpay/tokenlists'),
    readJson(nm('@yodlpay/tokenlists/dist/tokenlist-generated.json'))
        .tokens.map((t) => ({...t, logoURI: t.logoURI || t.logoUri})));

// LI.FI's default coins (Apache-2.0): one coin, many chains.
function lifiTokens() {
  const { defaultCoins } = require('@lifi/data-types');
  const entries = [];
  for (const coin of defaultCoins) {
    for (const [chainId, t] of Object.entries(coin.chains || {})) {
      entries.push({ ...t, chainId, name: coin.name, logoURI: t.logoURI || coin.logoURI });
    }
  }
  return tokenList('LI.FI default coins', source('@lifi/data-types'), entries);
}

// Hyperlane registry (MIT), read from its JSON files: core contracts on EVM mainnets, and warp
// routes. A route's collateral is its issuer's token and a synthetic route is the bridged token
// itself (both join the token list); the other routers are Hyperlane contracts.
function hyperlane() {
  const src = source('@hyperlane-xyz/registry');
  const dist = nm('@hyperlane-xyz/registry/dist');
  const chains = {};
  const core = [];
  for (const name of sortedDir(path.join(dist, 'chains'))) {
    const meta = path.join(dist, 'chains', name, 'metadata.json');
    if (!fs.existsSync(meta)) continue;
    const m = readJson(meta);
    if (m.protocol !== 'ethereum' || m.isTestnet || !toChainId(m.chainId)) continue;
    chains[name] = Number(m.chainId);
    const addrs = path.join(dist, 'chains', name, 'addresses.json');
    if (!fs.existsSync(addrs)) continue;
    const book = readJson(addrs);
    for (const k of Object.keys(book).sort()) core.push([m.chainId, book[k]]);
  }
  const tokens = [];
  const routes = path.join(dist, 'deployments', 'warp_routes');
  for (const sym of sortedDir(routes)) {
    for (const file of sortedDir(path.join(routes, sym))) {
      if (!file.endsWith('-config.json')) continue;
      for (const t of readJson(path.join(routes, sym, file)).tokens || []) {
        const chainId = chains[t.chainName];
        if (!chainId || !String(t.standard).startsWith('Evm')) continue;
        if (isContract(t.collateralAddressOrDenom)) {
          tokens.push({ ...t, chainId, address: t.collateralAddressOrDenom });
          core.push([chainId, t.addressOrDenom]);
        } else if (/Synthetic/.test(t.standard)) {
          tokens.push({ ...t, chainId, address: t.addressOrDenom });
        } else {
          core.push([chainId, t.addressOrDenom]);
        }
      }
    }
  }
  return {
    project: project('hyperlane', 'Hyperlane', 'bridge', src, core),
    tokens: tokenList('Hyperlane warp route tokens', src, tokens)
  };
}

// Safe (MIT): singletons, proxy factories, libraries and modules on every chain.
function safe() {
  const pairs = [];
  const add = (doc) => {
    for (const [chainId, v] of Object.entries(doc.networkAddresses || {})) {
      for (const ref of Array.isArray(v) ? v : [v]) {
        const a = isAddress(ref) ? ref
          : (doc.deployments && doc.deployments[ref] && doc.deployments[ref].address) || doc.defaultAddress;
        pairs.push([chainId, a]);
      }
    }
  };
  const walk = (dir) => {
    for (const f of sortedDir(dir)) {
      const p = path.join(dir, f);
      if (fs.statSync(p).isDirectory()) walk(p);
      else if (f.endsWith('.json') && !f.startsWith('daimo-')) add(readJson(p));  // Daimo's, not Safe's
    }
  };
  walk(nm('@safe-global/safe-deployments/dist/assets'));
  walk(nm('@safe-global/safe-modules-deployments/dist/assets'));
  return project(
      'safe', 'Safe', 'wallet',
      [source('@safe-global/safe-deployments'), source('@safe-global/safe-modules-deployments')],
      pairs);
}

// 0x protocol (Apache-2.0): exchange proxy, settlers, staking, ZRX; WETH is not 0x's.
function zeroEx() {
  const { ChainId, getContractAddressesForChainOrThrow } = require('@0x/contract-addresses');
  const pairs = [];
  const ids = [...new Set(Object.values(ChainId).filter((v) => Number.isInteger(v)))].sort((a, b) => a - b);
  for (const chainId of ids) {
    const book = getContractAddressesForChainOrThrow(chainId);
    for (const k of Object.keys(book).sort()) if (k !== 'etherToken') pairs.push([chainId, book[k]]);
  }
  return project('0x', '0x', 'dex', source('@0x/contract-addresses'), pairs);
}

// Zora (MIT): creator, coin, mint and sparks contracts; Uniswap, Permit2 and WETH are not Zora's.
function zora() {
  const z = require('@zoralabs/protocol-deployments');
  const pairs = [];
  for (const k of Object.keys(z).sort()) {
    if (!k.endsWith('Address') || /^(uniswap|universalRouter|permit2|weth)/i.test(k)) continue;
    for (const [chainId, a] of Object.entries(z[k] || {})) pairs.push([chainId, a]);
  }
  return project('zora', 'Zora', 'nft', source('@zoralabs/protocol-deployments'), pairs);
}

// MetaMask Delegation Framework ((MIT-0 OR Apache-2.0)): delegation manager, enforcers, factory.
function metamaskDelegation() {
  const { DELEGATOR_CONTRACTS } = require('@metamask/delegation-deployments');
  const pairs = [];
  for (const version of Object.keys(DELEGATOR_CONTRACTS).sort()) {
    for (const [chainId, book] of Object.entries(DELEGATOR_CONTRACTS[version])) {
      for (const k of Object.keys(book).sort()) pairs.push([chainId, book[k]]);
    }
  }
  return project(
      'metamask-delegation-framework', 'MetaMask Delegation Framework', 'wallet',
      source('@metamask/delegation-deployments'), pairs);
}

// 1delta's DEX registry (MIT): factories, vaults and routers of ~150 DEXs, grouped by protocol
// (PANCAKESWAP_V2 and PANCAKESWAP_V3 are PancakeSwap), plus flash-loan vaults of lending protocols.
function dexes() {
  const src = source('@1delta/dex-registry');
  const d = require('@1delta/dex-registry');
  const byProtocol = new Map();
  const add = (key, chainId, a) => {
    const base = key.replace(/_V\d+.*$/i, '').replace(/_/g, ' ').trim().toLowerCase();
    if (!base) return;
    if (!byProtocol.has(base)) byProtocol.set(base, []);
    byProtocol.get(base).push([chainId, a]);
  };
  const walk = (key, obj, chainId, depth) => {
    if (depth > 5 || obj === null || typeof obj !== 'object') return;
    for (const [k, v] of Object.entries(obj)) {
      const c = toChainId(k) ? k : chainId;
      if (isAddress(v)) { if (c) add(key, c, v); } else walk(key, v, c, depth + 1);
    }
  };
  for (const group of ['UNISWAP_V2_FORKS', 'UNISWAP_V3_FORKS', 'UNISWAP_V4_FORKS', 'BALANCER_V2_FORKS',
    'BALANCER_V3_FORKS', 'DODO_V2_DATA', 'GMX_FORKS', 'IZUMI_FORKS', 'MAVERICK_V2']) {
    const forks = d[group] || {};
    for (const key of Object.keys(forks).sort()) walk(key, forks[key], null, 0);
  }
  const vaults = d.FLASH_LOAN_VAULT_IDS || {};
  for (const chainId of Object.keys(vaults).sort()) {
    for (const key of Object.keys(vaults[chainId]).sort()) {
      for (const v of vaults[chainId][key] || []) add(key, chainId, v.address);
    }
  }
  const title = (s) => s.replace(/\b[a-z]/g, (c) => c.toUpperCase());
  return [...byProtocol.keys()].sort().map(
      (base) => project(base.replace(/ /g, '-'), title(base), 'dex', src, byProtocol.get(base)));
}

// Test networks: the chains Hyperlane's registry marks as testnets, and older ones it no longer
// lists. Their contracts are no one's real activity.
const TESTNETS = (() => {
  const ids = new Set([
    3,     4,     5,      42,     69,     97,     280,      300,      420,      1442,
    2522,  4002,  17000,  43113,  44787,  59140,  59141,    80001,    80002,    80084,
    84531, 84532, 421611, 421613, 421614, 534351, 11155111, 11155420, 168587773
  ]);
  const chains = nm('@hyperlane-xyz/registry/dist/chains');
  for (const name of sortedDir(chains)) {
    const meta = path.join(chains, name, 'metadata.json');
    if (!fs.existsSync(meta)) continue;
    const m = readJson(meta);
    if (m.isTestnet && m.protocol === 'ethereum' && toChainId(m.chainId))
      ids.add(Number(m.chainId));
  }
  return ids;
})();
const mainnet = (chainId) => toChainId(chainId) && !TESTNETS.has(Number(chainId));

// MetaMask's contract map (ISC), keyed by address on Ethereum mainnet: ERC-721 entries are NFTs.
function metamaskTokens() {
  const map = readJson(nm('@metamask/contract-metadata/contract-map.json'));
  const base = 'https://raw.githubusercontent.com/MetaMask/contract-metadata/master/images/';
  const entries = Object.keys(map).sort().map((address) => {
    const m = map[address];
    return {
      chainId: 1,
      address,
      name: m.name,
      symbol: m.symbol,
      decimals: m.decimals,
      logoURI: m.logo ? base + m.logo : undefined,
      category: m.erc721 ? 'nft' : 'token'
    };
  });
  return tokenList('MetaMask contract metadata', source('@metamask/contract-metadata'), entries);
}

// Aave's token list (MIT) mixes underlying assets (their issuers' projects) with Aave's own
// aTokens, debt and static tokens; only the underlying ones stay a token list, the rest are
// Aave's contracts (aave() above).
const aaveUnderlyingTokens = () => tokenList(
    'Aave underlying assets', source('@bgd-labs/aave-address-book'),
    readJson(nm('@bgd-labs/aave-address-book/tokenlist.json')).tokens.filter(isUnderlying));

// Optimism's bridged-token list (MIT), a JavaScript module.
const optimismTokens = () => tokenList(
    'Optimism bridged tokens', source('@eth-optimism/tokenlist'),
    require('@eth-optimism/tokenlist').default.tokens);

// Ledger's crypto-assets (Apache-2.0): the ERC-20 tokens Ledger Live shows, one file per EVM chain.
// A row is [parent currency, id, ticker, decimals, name, signature, address, no countervalue,
// delisted, ...]; delisted tokens and test networks are dropped.
function ledgerTokens() {
  const dir = pk('@ledgerhq/cryptoassets/lib/data/evm');
  const entries = [];
  const chains = sortedDir(dir).filter((c) => mainnet(c)).sort((a, b) => Number(a) - Number(b));
  for (const chainId of chains) {
    const file = path.join(dir, chainId, 'erc20.json');
    if (!fs.existsSync(file)) continue;
    for (const row of readJson(file)) {
      if (!Array.isArray(row) || row[8] === true || /sepolia|goerli|ropsten|testnet/i.test(row[0]))
        continue;
      entries.push({chainId, address: row[6], name: row[4], symbol: row[2], decimals: row[3]});
    }
  }
  return tokenList('Ledger crypto-assets ERC-20 tokens', source('@ledgerhq/cryptoassets'), entries);
}

// 1delta's asset registry (MIT): token metadata per chain, lower-case addresses. Its "asset
// groups" join unrelated tokens that share a ticker, so they are not used to merge.
function oneDeltaTokens() {
  const {ASSET_META} = require(pk('@1delta/asset-registry'));
  const entries = [];
  const chains =
      Object.keys(ASSET_META).filter((c) => mainnet(c)).sort((a, b) => Number(a) - Number(b));
  for (const chainId of chains) {
    for (const address of Object.keys(ASSET_META[chainId]).sort()) {
      const t = ASSET_META[chainId][address];
      entries.push({chainId, address, name: t.name, symbol: t.symbol, decimals: t.decimals});
    }
  }
  return tokenList('1delta asset registry', source('@1delta/asset-registry'), entries);
}

// SwapKit's token lists (Apache-2.0): tickers only, no names. The importer keeps such entries
// only where another list names the same contract (they add that list as a source). An ES
// module: imported, since require() of one needs Node.js 20 and Debian 12 has 18.
async function swapkitTokens() {
  const dir = pk('@swapkit/tokens');
  const main = path.join(dir, readJson(path.join(dir, 'package.json')).main);
  const {tokenLists} = await import(require('url').pathToFileURL(main).href);
  const entries = [];
  for (const key of Object.keys(tokenLists).sort()) {
    for (const t of tokenLists[key].tokens || []) {
      if (!mainnet(t.chainId)) continue;
      entries.push({
        chainId: t.chainId,
        address: t.address,
        name: t.name || t.ticker,
        symbol: t.ticker,
        decimals: t.decimals,
        logoURI: t.logoURI
      });
    }
  }
  return tokenList('SwapKit tokens', source('@swapkit/tokens'), entries);
}

// Index Coop's token list (MIT, in its licence file): index products and the tokens they hold.
const indexCoopTokens = () => tokenList(
    'Index Coop tokens', source('@indexcoop/tokenlists'),
    readJson(pk('@indexcoop/tokenlists/dist/indexcoop.tokenlist.json')).tokens);

// Reservoir's SDK (MIT): NFT marketplaces and protocols per chain. Versions of one protocol are
// one project; test contracts, shared helpers and Reservoir's own router are left out.
function nftProtocols() {
  const src = source('@reservoir0x/sdk');
  const book = readJson(pk('@reservoir0x/sdk/dist/addresses.json'));
  const NAMES = {
    Alienswap: 'Alienswap',
    ArtBlocks: 'Art Blocks',
    Beeple: 'Beeple',
    BendDao: 'BendDAO',
    Blend: 'Blur',
    Blur: 'Blur',
    CryptoArte: 'CryptoArte',
    CryptoKitties: 'CryptoKitties',
    CryptoPunks: 'CryptoPunks',
    CryptoVoxels: 'Cryptovoxels',
    Decentraland: 'Decentraland',
    Ditto: 'Ditto',
    Element: 'Element',
    Coinbase: 'Coinbase NFT',
    FairXyz: 'Fair.xyz',
    Foundation: 'Foundation',
    HighlightXyz: 'Highlight',
    Joepeg: 'Joepegs',
    LooksRare: 'LooksRare',
    Manifold: 'Manifold',
    Mintify: 'Mintify',
    Mooar: 'MOOAR',
    NftTrader: 'NFT Trader',
    Nftx: 'NFTX',
    Nouns: 'Nouns',
    Okex: 'OKX NFT',
    PaymentProcessor: 'Payment Processor',
    Quixotic: 'Quix',
    Rarible: 'Rarible',
    Seadrop: 'OpenSea',
    Seaport: 'OpenSea',
    Sudoswap: 'Sudoswap',
    SuperRare: 'SuperRare',
    TofuNft: 'tofuNFT',
    Treasure: 'Treasure',
    Wyvern: 'OpenSea',
    X2Y2: 'X2Y2',
    ZeroExSplits: '0xSplits',
    Zora: 'Zora',
    Erc721c: 'ERC721-C (Limit Break)',
  };
  const SKIP_KEYS = /^(Test|Native|NativeEthAddress|.*ConduitKey|.*CodeHash|SushiRouter|QuoterV2)/;
  const byName = new Map();
  for (const group of Object.keys(book).sort()) {
    const base = group.replace(/(V\d+|Base)$/, '');
    const name = NAMES[base];
    if (!name) continue;  // Common, RouterV6 (Reservoir's router) and 0x (its own project)
    if (!byName.has(name)) byName.set(name, []);
    for (const key of Object.keys(book[group]).sort()) {
      if (SKIP_KEYS.test(key)) continue;
      for (const [chainId, a] of Object.entries(book[group][key] || {})) {
        if (mainnet(chainId)) byName.get(name).push([chainId, a]);
      }
    }
  }
  const slug = (n) => n.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  return [...byName.keys()].sort().map((n) => project(slug(n), n, 'nft', src, byName.get(n)));
}

async function main() {
  const hl = hyperlane();
  const files = {
    '00-protocol-address-books.json': {
      name: 'protocol address books',
      projects: [
        uniswap(), aave(), safe(), zeroEx(), zora(), metamaskDelegation(), hl.project, ...dexes(),
        ...nftProtocols()
      ].filter((p) => p.contracts.length > 0),
    },
    '10-metamask-tokenlist.json': metamaskTokens(),
    '11-aave-tokenlist.json': aaveUnderlyingTokens(),
    '12-optimism-tokenlist.json': optimismTokens(),
    '13-superfluid-tokenlist.json': superfluidTokens(),
    '14-lifi-tokenlist.json': lifiTokens(),
    '15-yodl-tokenlist.json': yodlTokens(),
    '16-hyperlane-warp-tokenlist.json': hl.tokens,
    '17-indexcoop-tokenlist.json': indexCoopTokens(),
    '18-beefy-tokenlist.json': beefyTokens(),
    '19-ethereum-lists-tokenlist.json': ethereumListsTokens(),
    '20-ledger-tokenlist.json': ledgerTokens(),
    '30-1delta-tokenlist.json': oneDeltaTokens(),
    '40-swapkit-tokenlist.json': await swapkitTokens(),
  };
  for (const [name, doc] of Object.entries(files)) write(name, doc);
  for (const f of sortedDir(out)) console.log(path.join(out, f));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
