// Fetches the data-only packages of packs.json from the npm registry as tarballs (`npm pack`: no
// dependencies, no install scripts) and unpacks each into packs/<name>/. These packages ship
// token data beside code whose dependency trees (hardhat, axios, redux, ...) the exporter never
// runs; `npm ci` would install hundreds of them. Each tarball must match its pinned integrity
// (sha512), so a pinned version always yields the same bytes. Idempotent: a package already
// unpacked at its pinned integrity is skipped.
'use strict';
const {execFileSync} = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const packsDir = path.join(__dirname, 'packs');
const {packages} = JSON.parse(fs.readFileSync(path.join(__dirname, 'packs.json'), 'utf8'));
fs.mkdirSync(packsDir, {recursive: true});

for (const {name, version, integrity} of packages) {
  const dest = path.join(packsDir, name);
  const stamp = path.join(dest, '.integrity');
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === integrity) continue;
  const tmp = fs.mkdtempSync(path.join(packsDir, '.fetch-'));
  try {
    const out = execFileSync(
        'npm', ['pack', '--json', '--pack-destination', tmp, `${name}@${version}`],
        {encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit']});
    const [{filename}] = JSON.parse(out);
    const tarball = path.join(tmp, path.basename(filename));
    const digest =
        'sha512-' + crypto.createHash('sha512').update(fs.readFileSync(tarball)).digest('base64');
    if (digest !== integrity) {
      throw new Error(`${name}@${version}: integrity ${digest} is not the pinned ${integrity}`);
    }
    fs.rmSync(dest, {recursive: true, force: true});
    fs.mkdirSync(dest, {recursive: true});
    execFileSync('tar', ['-xzf', tarball, '-C', dest, '--strip-components=1', '--no-same-owner']);
    fs.writeFileSync(stamp, integrity);
    console.log(`${name}@${version}`);
  } finally {
    fs.rmSync(tmp, {recursive: true, force: true});
  }
}
