// Which licence an npm package is under, read from the package itself, and whether the registry
// may use it: MIT, MIT-0, ISC, Apache-2.0, BSD (0/2/3-clause) or CC0-1.0. An SPDX expression is
// accepted when every AND term has an accepted alternative ("(MIT-0 OR Apache-2.0)" is).
'use strict';
const fs = require('fs');
const path = require('path');

const ACCEPTED = new Set(
    ['MIT', 'MIT-0', 'ISC', 'Apache-2.0', '0BSD', 'BSD-2-Clause', 'BSD-3-Clause', 'CC0-1.0']);

// A licence file's text -> its SPDX id, for packages whose package.json names none.
function spdxOfText(text) {
  const t = text.replace(/\s+/g, ' ');
  if (/Apache License,? Version 2\.0/i.test(t)) return 'Apache-2.0';
  if (/Permission is hereby granted, free of charge, to any person obtaining a copy/i.test(t))
    return 'MIT';
  if (/Permission to use, copy, modify, and\/or distribute this software for any purpose/i.test(t))
    return 'ISC';
  if (/CC0 1\.0 Universal/i.test(t)) return 'CC0-1.0';
  if (/Redistribution and use in source and binary forms/i.test(t)) {
    return /Neither the name/i.test(t) ? 'BSD-3-Clause' : 'BSD-2-Clause';
  }
  return null;
}

// True when `expr` (an SPDX expression) allows use under an accepted licence.
function accepted(expr) {
  if (typeof expr !== 'string' || !expr.trim()) return false;
  const terms = expr.replace(/[()]/g, ' ').split(/\s+AND\s+/i);
  return terms.every((term) => term.split(/\s+OR\s+/i).some((id) => ACCEPTED.has(id.trim())));
}

// {name, version, licence} of the package in `dir`; licence is the SPDX expression of its
// package.json, else the one its LICENSE/LICENCE/COPYING file's text identifies, else null.
function packageLicence(dir) {
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  let licence = typeof meta.license === 'string'            ? meta.license :
      meta.license && typeof meta.license.type === 'string' ? meta.license.type :
      Array.isArray(meta.licenses) && meta.licenses[0]      ? meta.licenses[0].type :
                                                              null;
  if (!licence || /^SEE LICEN[CS]E/i.test(licence)) {
    licence = null;
    for (const f of fs.readdirSync(dir).sort()) {
      if (!/^(LICEN[CS]E|COPYING)/i.test(f)) continue;
      licence = spdxOfText(fs.readFileSync(path.join(dir, f), 'utf8'));
      if (licence) break;
    }
  }
  return {name: meta.name, version: meta.version, licence};
}

// "name@version" of the package in `dir` if its licence is accepted; throws naming it otherwise.
function checkedSource(dir) {
  const {name, version, licence} = packageLicence(dir);
  if (!accepted(licence)) {
    throw new Error(
        `refused ${name}@${version}: licence ${licence || 'unknown'} is not MIT, ISC, ` +
        'Apache-2.0, BSD or CC0');
  }
  return `${name}@${version}`;
}

module.exports = {
  accepted,
  checkedSource,
  packageLicence,
  spdxOfText
};
