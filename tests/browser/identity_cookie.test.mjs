// Real-browser test of the identity cookie (issue 3). Headless Debian chromium driven by
// playwright-core (never `npx playwright install`): a publisher page on one site calls
// POST /v1/ads on another site with credentials: "include".
//
//   node identity_cookie.test.mjs [path/to/adserver]     (or ADSERVER_BINARY=...)
//
// Sites on loopback (docs: ../../../shared/notes/browser-testing.md): the publisher pages are
// http://pub.localhost:P and http://other.localhost:P (a second publisher site), the ad server
// is http://127.0.0.1:Q. All three are potentially trustworthy, so Secure cookies work over
// plain http, and they are three different sites.
//
// Run A, third-party cookies allowed (profile cookie_controls_mode = 0):
//   consent + wallet sets the cookie and its partitioned twin; a wallet-less consented call
//   returns an ad for that wallet; the cross-site cookie also recognises the visitor on the
//   other publisher; a call without consent sends no usable identity (400: no ad) and a
//   fresh profile without consent stores no cookie at all.
// Run B, the Debian default profile (third-party cookies blocked): only the partitioned
//   twin is stored; it recognises the visitor on the same publisher and not on another.
// Each run checks that the page could read the bodies (preflight + response CORS headers).
// Run A also checks (C) that a third site using the key of a publisher listing no origins is
// served without the identity cookie (issue 39).

import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const binary = process.argv[2] || process.env.ADSERVER_BINARY || 'build/adserver';
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const WALLET = '0x1111111111111111111111111111111111111111';
const ADMIN_TOKEN = 'browser-test-admin-token-' + randomBytes(6).toString('hex');

let failures = 0;
function check(cond, what, extra = '') {
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${what}${!cond && extra ? ' -- ' + extra : ''}`);
  if (!cond) failures++;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'adserver-browser-'));
const cleanups = [];

async function startAdserver() {
  const ready = path.join(tmp, 'ready');
  const env = { ...process.env, ADSERVER_ADMIN_TOKEN: ADMIN_TOKEN,
                ADSERVER_IDENTITY_KEYS: '1:' + randomBytes(32).toString('hex') };
  const child = spawn(binary, ['serve', '--data', path.join(tmp, 'data'), '--listen',
                               '127.0.0.1:0', '--ready-file', ready, '--log-level', 'warn'],
                      { env, stdio: ['ignore', 'inherit', 'inherit'] });
  cleanups.push(() => new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', resolve);
    child.kill('SIGTERM');
  }));
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error('adserver exited with ' + child.exitCode);
    if (fs.existsSync(ready) && fs.readFileSync(ready, 'utf8').trim()) {
      return Number(fs.readFileSync(ready, 'utf8').trim());
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('adserver did not get ready');
}

async function admin(base, method, target, body, contentType = 'application/json') {
  const res = await fetch(base + target, {
    method, headers: { Authorization: 'Bearer ' + ADMIN_TOKEN, 'Content-Type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${target} -> ${res.status} ${text}`);
  return JSON.parse(text);
}

async function seed(base, origins) {
  const pub = await admin(base, 'POST', '/admin/v1/publishers',
                          { name: 'Browser publisher', allowedOrigins: origins });
  const key = await admin(base, 'POST', `/admin/v1/publishers/${pub.id}/keys`, { test: false });
  const community = await admin(base, 'POST', '/admin/v1/communities',
                                { name: 'Aave Co', logoUrl: 'https://cdn.example/aave.png' });
  await admin(base, 'POST', '/admin/v1/projects', { slug: 'uniswap', name: 'Uniswap',
    contracts: [{ chainId: 1, address: '0x3fC91A3afd70395Cd496C647d5a6CC9D4B2b7FAD' }] });
  const campaign = await admin(base, 'POST', '/admin/v1/campaigns', {
    communityId: community.id, name: 'Aave for swappers', status: 'active',
    pricing: { model: 'CPM', bid: 10 }, targeting: { projects: ['uniswap'], recencyDays: 30 } });
  await admin(base, 'POST', '/admin/v1/ads', { campaignId: campaign.id, headline: 'Earn on Aave',
    content: 'Supply on **Aave**.', ctaUrl: 'https://app.aave.com', ctaLabel: 'Open Aave',
    images: { LANDSCAPE: 'https://cdn.example/a.png' } });
  const day = new Date(Date.now() - 86400e3).toISOString().replace(/\.\d+Z$/, 'Z');
  await admin(base, 'POST', '/admin/v1/activity',
              JSON.stringify({ wallet: WALLET, project: 'uniswap', chainId: 1, timestamp: day }) + '\n',
              'application/x-ndjson');
  // A second publisher that lists no origins (issue 39): browsers calling with its key are
  // served as if the visitor had not consented.
  const open = await admin(base, 'POST', '/admin/v1/publishers', { name: 'Publisher without origins' });
  const openKey = await admin(base, 'POST', `/admin/v1/publishers/${open.id}/keys`, { test: false });
  return { key: key.key, openKey: openKey.key, campaignId: String(campaign.id) };
}

function startPublisherSite() {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>publisher</title><p>publisher page</p>');
  });
  cleanups.push(() => new Promise((r) => server.close(r)));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

// Runs the SDK's call from the page: a credentialed cross-site fetch. Returns what the page
// could read, plus the request/response headers Playwright saw.
async function callFromPage(page, adsUrl, apiKey, body) {
  const [request, result] = await Promise.all([
    page.waitForRequest((r) => r.url() === adsUrl && r.method() === 'POST'),
    page.evaluate(async ({ url, key, body }) => {
      try {
        const res = await fetch(url, { method: 'POST', credentials: 'include',
          headers: { 'Content-Type': 'application/json', 'x-api-key': key },
          body: JSON.stringify(body) });
        const text = await res.text();
        return { status: res.status, text };
      } catch (e) {
        return { error: String(e) };
      }
    }, { url: adsUrl, key: apiKey, body }),
  ]);
  const response = await request.response();
  return { ...result, requestHeaders: await request.allHeaders(),
           responseHeaders: response ? await response.allHeaders() : {} };
}

function sentCookies(call) {
  const header = call.requestHeaders.cookie || '';
  return Object.fromEntries(header.split(';').map((p) => p.trim()).filter(Boolean)
                                  .map((p) => [p.split('=')[0], p.slice(p.indexOf('=') + 1)]));
}

async function launch(name, allowThirdPartyCookies) {
  const dir = path.join(tmp, 'profile-' + name);
  fs.mkdirSync(path.join(dir, 'Default'), { recursive: true });
  if (allowThirdPartyCookies) {
    fs.writeFileSync(path.join(dir, 'Default', 'Preferences'),
                     JSON.stringify({ profile: { cookie_controls_mode: 0 } }));
  }
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: chromiumPath, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync'] });
  cleanups.push(() => context.close().catch(() => {}));
  return context;
}

async function main() {
  const adsPort = await startAdserver();
  const pubPort = await startPublisherSite();
  const adsBase = `http://127.0.0.1:${adsPort}`;
  const adsUrl = `${adsBase}/v1/ads`;
  const pubOrigin = `http://pub.localhost:${pubPort}`;
  const otherOrigin = `http://other.localhost:${pubPort}`;
  const { key, openKey, campaignId } = await seed(adsBase, [pubOrigin, otherOrigin]);
  const evilOrigin = `http://evil.localhost:${pubPort}`;
  const withWallet = { walletAddresses: [WALLET], imageFormat: 'LANDSCAPE', cookieConsent: true };
  const walletless = { imageFormat: 'LANDSCAPE', cookieConsent: true };

  // ---- Run A: third-party cookies allowed.
  {
    console.log('# run A: third-party cookies allowed (cookie_controls_mode = 0)');
    const context = await launch('allow', true);
    const page = await context.newPage();
    // Playwright does not surface CORS preflights; the DevTools protocol does.
    const preflights = [];
    const preflightAnswers = [];
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    cdp.on('Network.requestWillBeSent', (e) => {
      if (e.request.method === 'OPTIONS' || e.type === 'Preflight') preflights.push(e.requestId);
    });
    cdp.on('Network.responseReceived', (e) => {
      if (preflights.includes(e.requestId)) preflightAnswers.push(e.response);
    });
    await page.goto(pubOrigin + '/article');

    const first = await callFromPage(page, adsUrl, key, withWallet);
    check(first.status === 200, 'A: consented call with a wallet returns an ad', JSON.stringify(first));
    check(!first.error && JSON.parse(first.text || '{}').campaignId === campaignId,
          'A: the page can read the ad body (CORS)', first.error || first.text);
    check(first.responseHeaders['access-control-allow-origin'] === pubOrigin &&
          first.responseHeaders['access-control-allow-credentials'] === 'true',
          'A: response echoes the Origin with Allow-Credentials', JSON.stringify(first.responseHeaders));
    const cookies = await context.cookies(adsBase);
    const main = cookies.find((c) => c.name === 'adserver_id');
    const twin = cookies.find((c) => c.name === 'adserver_id_p');
    check(main && main.httpOnly && main.secure && main.sameSite === 'None',
          'A: identity cookie stored with HttpOnly; Secure; SameSite=None', JSON.stringify(cookies));
    check(!!twin, 'A: partitioned twin stored', JSON.stringify(cookies));

    const second = await callFromPage(page, adsUrl, key, walletless);
    check('adserver_id' in sentCookies(second), 'A: the browser sends the cookie cross-site',
          JSON.stringify(second.requestHeaders));
    check(second.status === 200 && JSON.parse(second.text || '{}').campaignId === campaignId,
          'A: wallet-less consented call returns an ad for the remembered wallet',
          JSON.stringify(second));

    const noConsent = await callFromPage(page, adsUrl, key, { imageFormat: 'LANDSCAPE' });
    check(noConsent.status === 400, 'A: without consent the cookie is ignored (wallet-less: no ad)',
          JSON.stringify(noConsent));
    check(!noConsent.responseHeaders['set-cookie'], 'A: without consent no cookie is set');

    // The cross-site cookie recognises the visitor on another publisher site too.
    const other = await context.newPage();
    await other.goto(otherOrigin + '/');
    const elsewhere = await callFromPage(other, adsUrl, key, walletless);
    check(elsewhere.status === 200, 'A: the unpartitioned cookie recognises the visitor on another site',
          JSON.stringify(elsewhere));
    // Issue 39: another site, using the public key of a publisher that lists no origins,
    // cannot learn which ad the visitor's identity gets: the browser sends the cookie, the
    // server neither reads nor re-sets it.
    const evil = await context.newPage();
    await evil.goto(evilOrigin + '/');
    const probe = await callFromPage(evil, adsUrl, openKey, walletless);
    check('adserver_id' in sentCookies(probe), 'C: the browser sends the cookie to the unlisted site too',
          JSON.stringify(probe.requestHeaders));
    check(probe.status === 400 && !probe.error, 'C: unlisted origin: the cookie is not read (wallet-less: 400, readable)',
          JSON.stringify(probe));
    const served = await callFromPage(evil, adsUrl, openKey, withWallet);
    check(served.status === 200 && !served.responseHeaders['set-cookie'],
          'C: unlisted origin with a wallet: served, no cookie set', JSON.stringify(served));
    const listedKeyElsewhere = await callFromPage(evil, adsUrl, key, withWallet);
    check(!!listedKeyElsewhere.error && listedKeyElsewhere.status === undefined,
          'C: a publisher listing origins refuses other sites (401, unreadable by the page)',
          JSON.stringify(listedKeyElsewhere));
    const answer = preflightAnswers[0];
    const h = Object.fromEntries(Object.entries(answer ? answer.headers : {})
                                       .map(([k, v]) => [k.toLowerCase(), v]));
    check(preflights.length > 0 && answer && answer.status === 204 &&
          h['access-control-allow-origin'] === pubOrigin &&
          h['access-control-allow-credentials'] === 'true' &&
          /x-api-key/.test(h['access-control-allow-headers'] || ''),
          'A: the browser preflighted the call and the answer allowed it',
          JSON.stringify({ preflights: preflights.length, answer: answer && answer.status, h }));
    await context.close();
  }

  // ---- Fresh profile without consent: nothing stored, no ad without wallets.
  {
    console.log('# run A2: no consent, fresh profile');
    const context = await launch('noconsent', true);
    const page = await context.newPage();
    await page.goto(pubOrigin + '/');
    const r1 = await callFromPage(page, adsUrl, key,
                                  { walletAddresses: [WALLET], imageFormat: 'LANDSCAPE', cookieConsent: false });
    check(r1.status === 200, 'A2: non-consented call with a wallet is served', JSON.stringify(r1));
    check((await context.cookies(adsBase)).length === 0, 'A2: no cookie is stored without consent');
    const r2 = await callFromPage(page, adsUrl, key, { imageFormat: 'LANDSCAPE', cookieConsent: false });
    check(r2.status !== 200, 'A2: the wallet-less call gets no ad', JSON.stringify(r2));
    await context.close();
  }

  // ---- Run B: the default profile blocks third-party cookies.
  {
    console.log('# run B: default profile (third-party cookies blocked)');
    const context = await launch('default', false);
    const page = await context.newPage();
    await page.goto(pubOrigin + '/');
    const first = await callFromPage(page, adsUrl, key, withWallet);
    check(first.status === 200, 'B: consented call with a wallet returns an ad', JSON.stringify(first));
    const cookies = await context.cookies(adsBase);
    const names = cookies.map((c) => c.name);
    check(names.includes('adserver_id_p'), 'B: the partitioned twin is stored', JSON.stringify(cookies));
    check(!names.includes('adserver_id'), 'B: the unpartitioned cookie is blocked', JSON.stringify(cookies));
    const second = await callFromPage(page, adsUrl, key, walletless);
    const sent = sentCookies(second);
    check('adserver_id_p' in sent && !('adserver_id' in sent), 'B: only the twin is sent',
          JSON.stringify(second.requestHeaders));
    check(second.status === 200 && JSON.parse(second.text || '{}').campaignId === campaignId,
          'B: the twin recognises the returning visitor on the same publisher', JSON.stringify(second));

    const other = await context.newPage();
    await other.goto(otherOrigin + '/');
    const elsewhere = await callFromPage(other, adsUrl, key, walletless);
    check(Object.keys(sentCookies(elsewhere)).length === 0,
          'B: no cookie is sent from another publisher site', JSON.stringify(elsewhere.requestHeaders));
    check(elsewhere.status !== 200, 'B: the visitor is not recognised on another publisher',
          JSON.stringify(elsewhere));
    await context.close();
  }
}

let error = null;
try {
  await main();
} catch (e) {
  error = e;
}
for (const c of cleanups.reverse()) await c();
fs.rmSync(tmp, { recursive: true, force: true });
if (error) {
  console.error('browser test error:', error);
  process.exit(1);
}
console.log(failures === 0 ? '# all browser checks passed' : `# ${failures} browser check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
