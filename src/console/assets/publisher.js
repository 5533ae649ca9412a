// adserver console: publisher pages. `#/publishers` (operators: every publisher, the tenant
// picker), `#/publishers/ID` (API keys, allowed origins, allowed/blocked communities,
// categories, payout rule), `#/publishers/ID/reports` (fill rate and earnings per adUnitId,
// the A/B comparison). A publisher user reaches only its own publisher (the API answers 404).
'use strict';

(function (C) {
  const { el, api, load, field, input, select, fmt, money, percent, table, report } = C;

  C.route('/publishers', ['operator'], async (root) => {
    const { publishers } = await load('/admin/v1/publishers');
    root.append(C.heading('Publishers'),
                C.notice('Pick a publisher to see its keys, settings and reports.'),
                table('Publishers', [
                  { label: 'Name', value: (p) => el('a', { href: '#/publishers/' + p.id, text: p.name }) },
                  { label: 'Id', key: 'id', numeric: true },
                  { label: 'Reports', value: (p) => el('a', { href: '#/publishers/' + p.id + '/reports', text: 'Reports', 'aria-label': 'Reports of ' + p.name }) },
                  { label: 'Payout', value: (p) => payoutText(p.payout) },
                  { label: 'Floor CPM', value: (p) => (p.floorCpm === null || p.floorCpm === undefined ? '–' : money(p.floorCpm)), numeric: true },
                ], publishers),
                operatorForm(null, (created) => { location.hash = '#/publishers/' + created.id; }));
  });

  // Issue 38 item 3: what only an operator sets on a publisher (a new one's name too): the
  // payout rule, the floor CPM, the rate limit of its keys and its A/B arms.
  function operatorForm(publisher, onSaved) {
    const p = publisher || { payout: { model: 'revshare', percent: 70 }, floorCpm: null, rateLimit: null, abArms: [] };
    const payout = p.payout || { model: 'revshare', percent: 70 };
    const f = {
      name: input({ value: publisher ? publisher.name : '' }),
      model: select([['revshare', 'Revenue share'], ['cpm', 'Guaranteed CPM']], payout.model),
      percent: input({ type: 'number', min: '0', max: '100', step: 'any', value: String(payout.percent ?? 70) }),
      cpm: input({ type: 'number', min: '0', step: 'any', value: payout.cpm === undefined ? '' : String(payout.cpm) }),
      floorCpm: input({ type: 'number', min: '0', step: 'any', value: p.floorCpm === null || p.floorCpm === undefined ? '' : String(p.floorCpm) }),
      rate: input({ type: 'number', min: '0', step: 'any', value: p.rateLimit ? String(p.rateLimit.perSecond) : '' }),
      arms: input({ value: (p.abArms || []).join(', ') }),
    };
    const percentField = field('payout.percent', 'Revenue share %', f.percent, 'The publisher\'s share of what advertisers spend on it.');
    const cpmField = field('payout.cpm', 'Guaranteed CPM', f.cpm, 'In ' + C.state.currency + ' per 1000 impressions, whatever advertisers paid.');
    const sync = () => { percentField.hidden = f.model.value !== 'revshare'; cpmField.hidden = f.model.value !== 'cpm'; };
    f.model.addEventListener('change', sync);
    sync();
    const done = el('p', { class: 'ok', role: 'status' });
    const form = el('form', { class: 'card form', novalidate: true, 'aria-labelledby': 'operator-form-title' },
      el('h3', { id: 'operator-form-title', text: publisher ? 'Operator settings' : 'New publisher' }),
      publisher ? null : field('name', 'Name', f.name),
      field('payout.model', 'Payout', f.model), percentField, cpmField,
      field('floorCpm', 'Floor CPM', f.floorCpm, 'In ' + C.state.currency + '; campaigns worth less per 1000 impressions are not served here. Empty = none.'),
      field('rateLimit.perSecond', 'Rate limit (requests per second)', f.rate, 'Per key; empty = the server\'s default.'),
      field('abArms', 'A/B arms', f.arms, 'Comma-separated arm names its ads are split between, e.g. A, B; empty = none.'),
      C.formError(), done,
      el('button', { type: 'submit', text: publisher ? 'Save operator settings' : 'Create publisher' }));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      done.textContent = '';
      C.busy(form, async () => {
        const number = (input) => (input.value.trim() === '' ? null : Number(input.value));
        const body = {
          payout: f.model.value === 'cpm' ? { model: 'cpm', cpm: number(f.cpm) } : { model: 'revshare', percent: number(f.percent) },
          floorCpm: number(f.floorCpm),
          rateLimit: number(f.rate) === null ? null : { perSecond: number(f.rate) },
          abArms: lines(f.arms.value),
        };
        if (!publisher) body.name = f.name.value.trim();
        const res = publisher ? await api('PATCH', '/admin/v1/publishers/' + publisher.id, body)
                              : await api('POST', '/admin/v1/publishers', body);
        if (res.status !== 200 && res.status !== 201) return C.showErrors(form, res);
        C.clearErrors(form);
        done.textContent = publisher ? 'Operator settings saved.' : '';
        onSaved(res.json);
      });
    });
    return form;
  }

  function payoutText(payout) {
    if (!payout) return '–';
    if (payout.model === 'cpm') return 'guaranteed CPM ' + money(payout.cpm);
    return 'revenue share ' + payout.percent + ' %';
  }

  const lines = (text) => text.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);

  function communityChecks(name, legend, communities, chosen) {
    const set = new Set(chosen || []);
    const box = el('fieldset', { class: 'checks', 'data-field': name, id: 'f-' + name, tabindex: '-1' },
                   el('legend', { text: legend }),
                   communities.map((c) => el('label', { class: 'check' },
                     el('input', { type: 'checkbox', value: String(c.id), checked: set.has(c.id) }),
                     ' ' + c.name)),
                   communities.length ? null : C.notice('No communities yet.'),
                   el('p', { class: 'field-error', id: 'f-' + name + '-error' }));
    return box;
  }

  const checked = (form, name) =>
    [...form.querySelector('[data-field="' + name + '"]').querySelectorAll('input:checked')].map((i) => Number(i.value));

  function settingsForm(publisher, communities, onSaved) {
    const origins = el('textarea', { rows: 3, value: (publisher.allowedOrigins || []).join('\n') });
    const categories = input({ value: (publisher.categoryOptIns || []).join(', ') });
    // Issue 39: browsers calling from unlisted origins are served without the identity cookie.
    const warning = el('p', { class: 'warning', role: 'note', id: 'origins-warning',
      text: 'No allowed origins: any site may call with your keys, and browsers are served without ' +
            'the identity cookie (returning visitors are not recognised). List your sites below.' });
    warning.hidden = (publisher.allowedOrigins || []).length > 0;
    const form = el('form', { class: 'card form', 'aria-labelledby': 'settings-title' },
      el('h3', { id: 'settings-title', text: 'Settings' }), warning,
      field('allowedOrigins', 'Allowed origins', origins,
            'One per line, e.g. https://news.example; empty = any origin, without the identity cookie.'),
      communityChecks('allowedCommunities', 'Allowed communities (none checked = any)', communities, publisher.allowedCommunities),
      communityChecks('blockedCommunities', 'Blocked communities', communities, publisher.blockedCommunities),
      field('categoryOptIns', 'Accepted campaign categories', categories,
            'Comma-separated, e.g. gambling, nft; campaigns with another category are not served.'),
      el('p', {}, el('strong', { text: 'Payout rule: ' }), payoutText(publisher.payout),
         el('span', { class: 'muted', text: ' (set by the operator)' })),
      C.formError(),
      el('button', { type: 'submit', text: 'Save settings' }));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      C.busy(form, async () => {
        const body = { allowedOrigins: lines(origins.value), categoryOptIns: lines(categories.value),
                       allowedCommunities: checked(form, 'allowedCommunities'),
                       blockedCommunities: checked(form, 'blockedCommunities') };
        const res = await api('PATCH', '/admin/v1/publishers/' + publisher.id, body);
        if (res.status !== 200) return C.showErrors(form, res);
        C.clearErrors(form);
        warning.hidden = body.allowedOrigins.length > 0;
        onSaved('Settings saved.');
      });
    });
    return form;
  }

  // API keys under `keysPath` (publisher keys, or a community's advertiser keys): the list
  // (prefix only), Create key (the new key shown once, until the next navigation), Revoke.
  function keysCard(keysPath, keys, onChange, hint) {
    const testBox = el('input', { type: 'checkbox', id: 'new-key-test' });
    const form = el('form', { class: 'inline-form' },
                    el('label', { class: 'check', for: 'new-key-test' }, testBox, ' Test key (never billed)'),
                    el('button', { type: 'submit', text: 'Create key' }), C.formError());
    const shown = el('div', { id: 'new-key-slot', 'aria-live': 'polite' });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      C.busy(form, async () => {
        const res = await api('POST', keysPath, { test: testBox.checked });
        if (res.status !== 201) return C.showErrors(form, res);
        await onChange();
        const keyNode = el('code', { class: 'secret', id: 'new-key-value', tabindex: '0', text: res.json.key });
        document.getElementById('new-key-slot').replaceChildren(
          el('p', { text: 'New key (shown once, copy it now): ' }), keyNode);
        keyNode.focus();
      });
    });
    const revoke = (key) => C.confirmButton('Revoke', 'Revoke key ' + key.prefix,
      (key.test ? 'Revoke this test key?' : 'Revoke this live key? Every site using it stops getting ads at once.') +
      ' This cannot be undone.',
      async () => {
        const res = await api('DELETE', keysPath + '/' + key.id);
        if (res.status !== 200) { form.querySelector('.form-error').textContent = C.errorText(res); return; }
        await onChange();
      });
    return el('section', { class: 'card', 'aria-labelledby': 'keys-title' },
      el('h3', { id: 'keys-title', text: 'API keys' }), hint ? C.notice(hint) : null, form, shown,
      table('Keys', [
        { label: 'Prefix', value: (k) => el('code', { text: k.prefix + '…' }) },
        { label: 'Kind', value: (k) => k.test ? 'test' : 'live' },
        { label: 'Created', value: (k) => k.createdAt.slice(0, 16).replace('T', ' ') },
        { label: 'State', value: (k) => k.revokedAt ? 'revoked ' + k.revokedAt.slice(0, 10) : revoke(k) },
      ], keys));
  }

  // The keys card in a box that redraws itself after a change, keeping a just-shown key.
  C.keysSection = async function (keysPath, hint) {
    const box = el('div');
    const draw = async () => {
      const slot = document.getElementById('new-key-slot');
      const kept = slot ? [...slot.childNodes] : [];
      const { keys } = await load(keysPath);
      box.replaceChildren(keysCard(keysPath, keys, draw, hint));
      box.querySelector('#new-key-slot').append(...kept);
    };
    await draw();
    return box;
  };

  C.route('/publishers/:id', ['operator', 'publisher'], async (root, { id }) => {
    const publisher = await load('/admin/v1/publishers/' + id);
    const [{ communities }, keysBox] = await Promise.all([
      load('/admin/v1/communities'),
      C.keysSection('/admin/v1/publishers/' + id + '/keys', 'Keys for POST /v1/ads (x-api-key).')]);
    const status = el('p', { class: 'ok', role: 'status' });
    root.append(C.heading(publisher.name),
                el('p', {}, el('a', { href: '#/publishers/' + id + '/reports', text: 'Reports: fill rate, earnings, A/B' })),
                status, keysBox,
                settingsForm(publisher, communities, (text) => { status.textContent = text; }),
                C.isOperator() ? operatorForm(publisher, () => {}) : null);
  });

  // Report rows → one series per adUnitId over the period's buckets (days or hours).
  function perUnit(rows, period, value) {
    const units = [...new Set(rows.map((r) => r.adUnitId ?? '(none)'))].sort();
    return units.map((unit) => {
      const byBucket = new Map(rows.filter((r) => (r.adUnitId ?? '(none)') === unit)
                                   .map((r) => [period.keyOf(r), r]));
      return { label: unit, data: period.buckets.map((b) => (byBucket.has(b) ? value(byBucket.get(b)) : null)) };
    });
  }

  // The A/B answer as a table; `what` names the variants ('adUnitId' or 'Arm').
  function abTable(ab, what = 'adUnitId', caption = 'A/B comparison of adUnitIds') {
    const interval = (m) => percent(m.value) + ' (' + percent(m.low) + ' – ' + percent(m.high) + ')';
    const test = (v, key) => {
      if (!v.vsBaseline) return 'baseline';
      const t = v.vsBaseline[key];
      if (!t || t.p === null) return 'nothing to test';
      return 'z ' + t.z.toFixed(2) + ', p ' + t.p.toFixed(3) + (t.better ? ', better: ' + t.better : ', no difference');
    };
    return table(caption + ' (95 % Wilson intervals; z-test against the first)', [
      { label: what, value: (v) => v.variant === '' ? '(none)' : v.variant },
      { label: 'Impressions', value: (v) => fmt(v.impressions), numeric: true },
      { label: 'Clicks', value: (v) => fmt(v.clicks), numeric: true },
      { label: 'CTR', value: (v) => interval(v.ctr) },
      { label: 'CTR vs first', value: (v) => test(v, 'ctr') },
      { label: 'Conversions', value: (v) => fmt(v.conversions), numeric: true },
      { label: 'CVR', value: (v) => interval(v.cvr) },
      { label: 'CVR vs first', value: (v) => test(v, 'cvr') },
    ], ab.variants || []);
  }

  C.abTable = abTable;

  C.route('/publishers/:id/reports', ['operator', 'publisher'], async (root, { id }) => {
    const publisher = await load('/admin/v1/publishers/' + id);
    // The URL's period (issue 38 item 1), per day or hour.
    const period = C.period('14');
    const params = { publisherId: id, groupBy: 'adUnitId', granularity: period.granularity, from: period.from, to: period.to };
    const [data, ab] = await Promise.all([
      load('/admin/v1/reports?' + C.query(params)),
      load('/admin/v1/reports/ab?' + C.query({ publisherId: id, from: period.from, to: period.to }))]);
    const rows = data.rows || [];
    const labels = period.buckets.map(period.label);
    const csv = (what) => C.csvLink('/admin/v1/reports', params, 'publisher-' + id + '-' + what + '-' + period.from + '-' + period.last);
    root.append(C.heading(publisher.name + ': reports'),
                el('p', {}, el('a', { href: '#/publishers/' + id, text: 'Keys and settings' })),
                C.periodControl(period),
                C.notice(period.title + ' (UTC) per adUnitId. Totals: ' + fmt(data.totals.requests) + ' requests, ' +
                         fmt(data.totals.impressions) + ' impressions, ' + fmt(data.totals.clicks) +
                         ' clicks, earnings ' + money(data.totals.earnings) + '.'));
    const unit = { label: 'adUnitId', value: (r) => r.adUnitId ?? '(none)' };
    const bucket = { label: period.bucketName, value: (r) => String(r.time).slice(0, period.granularity === 'hour' ? 16 : 10).replace('T', ' ') };
    report(root, 'Fill rate per adUnitId',
           { labels, datasets: perUnit(rows, period, (r) => (r.requests ? 100 * r.fills / r.requests : null)), yTitle: 'Fill rate %',
             yFromData: true },
           table('Fill rate per ' + period.bucketName.toLowerCase() + ' and adUnitId', [bucket, unit,
             { label: 'Requests', value: (r) => fmt(r.requests), numeric: true },
             { label: 'Fills', value: (r) => fmt(r.fills), numeric: true },
             { label: 'Fill rate', value: (r) => percent(r.requests ? r.fills / r.requests : null), numeric: true }], rows),
           csv('fill'));
    report(root, 'Earnings per adUnitId',
           { labels, datasets: perUnit(rows, period, (r) => r.earnings), yTitle: 'Earnings' },
           table('Earnings per ' + period.bucketName.toLowerCase() + ' and adUnitId', [bucket, unit,
             { label: 'Impressions', value: (r) => fmt(r.impressions), numeric: true },
             { label: 'Clicks', value: (r) => fmt(r.clicks), numeric: true },
             { label: 'Earnings', value: (r) => money(r.earnings), numeric: true }], rows,
             { adUnitId: 'Total', time: 'Total', impressions: data.totals.impressions, clicks: data.totals.clicks, earnings: data.totals.earnings }),
           csv('earnings'));
    root.append(el('section', { class: 'report-block' }, el('h3', { text: 'A/B comparison' }), abTable(ab)));
  });
})(window.AdConsole);
