// Writes the installed project lists to out/ as JSON documents `adserver projects import` reads:
// token lists and MetaMask's contract map as they are, protocol address books (JavaScript modules)
// in adserver's address-book shape {"projects": [{slug, name, category, logoURI, contracts}]}.
// Only permissively licensed packages (MIT / ISC / Apache-2.0) are used; non-EVM entries, native
// coin placeholders and malformed addresses are dropped. Output is deterministic for a given
// package-lock.json. Run after `npm ci --ignore-scripts` (.npmrc skips optional peer deps: viem).
'use strict';
const fs = require('fs');
const path = require('path');

const out = path.join(__dirname, 'out');
fs.mkdirSync(out, { recursive: true });
const isAddress = (v) => typeof v === 'string' && /^0x[0-9a-fA-F]{40}$/.test(v);
const write = (name, doc) => fs.writeFileSync(path.join(out, name), JSON.stringify(doc));
const copy = (from, name) =>
  fs.copyFileSync(path.join(__dirname, 'node_modules', from), path.join(out, name));

// MetaMask contract map (ISC) and the Aave token list (MIT): Uniswap token-list schema.
copy('@metamask/contract-metadata/contract-map.json', 'metamask-contract-map.json');
// Aave's list mixes underlying assets (their issuers' projects) with Aave's own aTokens, debt and
// static tokens; only the underlying ones stay a token list, the rest are Aave contracts.
const aaveList = JSON.parse(fs.readFileSync(
  path.join(__dirname, 'node_modules/@bgd-labs/aave-address-book/tokenlist.json'), 'utf8'));
const isUnderlying = (t) => (t.tags || []).includes('underlying');
write('aave-tokenlist.json', { ...aaveList, tokens: aaveList.tokens.filter(isUnderlying) });
// Optimism's bridged-token list (MIT), a JavaScript module.
write('optimism-tokenlist.json', require('@eth-optimism/tokenlist').default);

// Uniswap protocol contracts per chain (MIT): routers, factories, position managers.
function uniswap() {
  const { CHAIN_TO_ADDRESSES_MAP } = require('@uniswap/sdk-core');
  const contracts = [];
  for (const [chainId, book] of Object.entries(CHAIN_TO_ADDRESSES_MAP)) {
    for (const v of Object.values(book)) {
      if (isAddress(v)) contracts.push({ chainId: Number(chainId), address: v });
    }
  }
  return { slug: 'uniswap', name: 'Uniswap', category: 'dex', contracts };
}

// Aave protocol contracts (MIT): every address in every market/governance book with a CHAIN_ID.
function aave() {
  const book = require('@bgd-labs/aave-address-book');
  const contracts = [];
  const walk = (obj, chainId, depth) => {
    if (depth > 6 || obj === null || typeof obj !== 'object') return;
    for (const [k, v] of Object.entries(obj)) {
      if (k === 'UNDERLYING') continue;  // the asset's issuer, not Aave
      if (isAddress(v)) contracts.push({ chainId, address: v });
      else walk(v, chainId, depth + 1);
    }
  };
  for (const mod of Object.values(book)) {
    if (mod && typeof mod === 'object' && Number.isInteger(mod.CHAIN_ID)) walk(mod, mod.CHAIN_ID, 0);
  }
  for (const t of aaveList.tokens) {
    if (!isUnderlying(t)) contracts.push({ chainId: t.chainId, address: t.address });
  }
  return { slug: 'aave', name: 'Aave', category: 'lending', contracts };
}


const nm = (p) => path.join(__dirname, 'node_modules', p);
const readJson = (p) => JSON.parse(fs.readFileSync(p, 'utf8'));
const sortedDir = (p) => fs.readdirSync(p).sort();
// A real contract address: not the zero address nor the 0xeeee… native-coin placeholder.
const isContract = (v) => isAddress(v) && !/^0x(0{40}|e{40})$/i.test(v);
const toChainId = (v) => (/^[0-9]+$/.test(String(v)) && Number(v) > 0 ? Number(v) : null);
const httpLogo = (v) => (typeof v === 'string' && /^https?:\/\//.test(v) ? v : undefined);
// A Uniswap-schema token list from {chainId, address, name, symbol, decimals, logoURI} entries.
function tokenList(name, entries) {
  const tokens = [];
  for (const t of entries) {
    const chainId = toChainId(t.chainId);
    if (!chainId || !isContract(t.address) || typeof t.name !== 'string' || !t.name.trim()) continue;
    const token = { chainId, address: t.address, name: t.name.trim() };
    if (typeof t.symbol === 'string') token.symbol = t.symbol;
    if (Number.isInteger(t.decimals)) token.decimals = t.decimals;
    const logo = httpLogo(t.logoURI);
    if (logo) token.logoURI = logo;
    tokens.push(token);
  }
  return { name, tokens };
}
// An address-book project from [chainId, address] pairs (deduplicated, order kept).
function project(slug, name, category, pairs) {
  const seen = new Set();
  const contracts = [];
  for (const [c, a] of pairs) {
    const chainId = toChainId(c);
    if (!chainId || !isContract(a)) continue;
    const key = `${chainId}:${a.toLowerCase()}`;
    if (seen.has(key)) continue;
    seen.add(key);
    contracts.push({ chainId, address: a });
  }
  return { slug, name, category, contracts };
}

// Beefy's address book (MIT): tokens on 40+ EVM chains.
function beefyTokens() {
  const { addressBook } = require('@beefyfinance/blockchain-addressbook');
  const entries = [];
  for (const chain of Object.keys(addressBook).sort()) {
    entries.push(...Object.values(addressBook[chain].tokens || {}));
  }
  return tokenList('Beefy address book tokens', entries);
}

// MyEtherWallet's ethereum-lists tokens as forked by erc20-token-list (Apache-2.0): Ethereum mainnet.
function ethereumListsTokens() {
  const map = readJson(nm('erc20-token-list/tokens.json'));
  const entries = Object.keys(map).sort().map((k) => {
    const t = map[k];
    return { chainId: 1, address: t.address, name: t.name, symbol: t.symbol, decimals: t.decimals,
             logoURI: t.logo && t.logo.src };
  });
  return tokenList('ethereum-lists ERC-20 tokens', entries);
}

// Superfluid's extended token list (MIT): Super Tokens and their underlying tokens.
const superfluidTokens = () => tokenList('Superfluid extended',
  readJson(nm('@superfluid-finance/tokenlist/dist/superfluid.extended.tokenlist.json')).tokens);

// Yodl's generated token list (MIT); it spells the logo field logoUri.
const yodlTokens = () => tokenList('Yodl tokens',
  readJson(nm('@yodlpay/tokenlists/dist/tokenlist-generated.json')).tokens
    .map((t) => ({ ...t, logoURI: t.logoURI || t.logoUri })));

// LI.FI's default coins (Apache-2.0): one coin, many chains.
function lifiTokens() {
  const { defaultCoins } = require('@lifi/data-types');
  const entries = [];
  for (const coin of defaultCoins) {
    for (const [chainId, t] of Object.entries(coin.chains || {})) {
      entries.push({ ...t, chainId, name: coin.name, logoURI: t.logoURI || coin.logoURI });
    }
  }
  return tokenList('LI.FI default coins', entries);
}

// Hyperlane registry (MIT), read from its JSON files: core contracts on EVM mainnets, and warp
// routes. A route's collateral is its issuer's token and a synthetic route is the bridged token
// itself (both join the token list); the other routers are Hyperlane contracts.
function hyperlane() {
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
  return { project: project('hyperlane', 'Hyperlane', 'bridge', core),
           tokens: tokenList('Hyperlane warp route tokens', tokens) };
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
  return project('safe', 'Safe', 'wallet', pairs);
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
  return project('0x', '0x', 'dex', pairs);
}

// Zora (MIT): creator, coin, mint and sparks contracts; Uniswap, Permit2 and WETH are not Zora's.
function zora() {
  const z = require('@zoralabs/protocol-deployments');
  const pairs = [];
  for (const k of Object.keys(z).sort()) {
    if (!k.endsWith('Address') || /^(uniswap|universalRouter|permit2|weth)/i.test(k)) continue;
    for (const [chainId, a] of Object.entries(z[k] || {})) pairs.push([chainId, a]);
  }
  return project('zora', 'Zora', 'nft', pairs);
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
  return project('metamask-delegation-framework', 'MetaMask Delegation Framework', 'wallet', pairs);
}

// 1delta's DEX registry (MIT): factories, vaults and routers of ~150 DEXs, grouped by protocol
// (PANCAKESWAP_V2 and PANCAKESWAP_V3 are PancakeSwap), plus flash-loan vaults of lending protocols.
function dexes() {
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
  return [...byProtocol.keys()].sort().map((base) =>
    project(base.replace(/ /g, '-'), title(base), 'dex', byProtocol.get(base)));
}

const hl = hyperlane();
write('beefy-tokenlist.json', beefyTokens());
write('ethereum-lists-tokenlist.json', ethereumListsTokens());
write('superfluid-tokenlist.json', superfluidTokens());
write('yodl-tokenlist.json', yodlTokens());
write('lifi-tokenlist.json', lifiTokens());
write('hyperlane-warp-tokenlist.json', hl.tokens);
write('protocol-address-books.json', {
  name: 'protocol address books',
  projects: [uniswap(), aave(), safe(), zeroEx(), zora(), metamaskDelegation(), hl.project, ...dexes()]
    .filter((p) => p.contracts.length > 0),
});
for (const f of sortedDir(out)) console.log(path.join(out, f));
