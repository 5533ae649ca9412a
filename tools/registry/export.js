// Writes the installed project lists to out/ as JSON documents `adserver projects import` reads:
// token lists and MetaMask's contract map as they are, protocol address books (JavaScript modules)
// in adserver's address-book shape {"projects": [{slug, name, category, logoURI, contracts}]}.
// Only permissively licensed packages (MIT / ISC) are used. Run after `npm ci --ignore-scripts`.
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

write('protocol-address-books.json', { name: 'protocol address books', projects: [uniswap(), aave()] });
for (const f of fs.readdirSync(out)) console.log(path.join(out, f));
