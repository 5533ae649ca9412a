// adserver console: shared helpers (API calls, DOM building, forms with field errors, charts
// with their tables, dates and numbers). Loaded first; the page files and app.js use
// `window.AdConsole`. Plain JS, no build step, nothing inline (CSP script-src 'self').
'use strict';

window.AdConsole = (function () {
  const state = { csrfToken: '', user: null, charts: [], currency: 'USD' };
  const routes = [];

  // A page's API answer was 404: the router shows "Not found" (another tenant's object).
  class NotFound extends Error {}
  // The session ended (401): app.js shows the sign-in form.
  class SignedOut extends Error {}

  async function api(method, path, body) {
    const headers = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (method !== 'GET' && state.csrfToken) headers['X-CSRF-Token'] = state.csrfToken;
    const res = await fetch(path, {
      method, headers, credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch (e) { json = null; }
    return { status: res.status, json };
  }

  function errorText(res) {
    return (res.json && res.json.error) || 'HTTP ' + res.status;
  }

  // GET that a page cannot do without: 404 → NotFound, 401 → SignedOut, other → Error.
  async function load(path) {
    let res = await api('GET', path);
    // 503: the store was busy for a moment (e.g. SQLite behind a rollup flush); try again.
    for (let retry = 1; res.status === 503 && retry <= 3; retry++) {
      await new Promise((resolve) => setTimeout(resolve, 200 * retry));
      res = await api('GET', path);
    }
    if (res.status === 200) return res.json;
    if (res.status === 404) throw new NotFound(path);
    if (res.status === 401) throw new SignedOut();
    throw new Error('Could not load ' + path + ': ' + errorText(res));
  }

  // el('p', {class: 'muted', text: 'hi', onclick: fn}, child, [children]...)
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = value;
      else if (key === 'value') node.value = value;
      else if (key === 'checked') node.checked = !!value;
      else if (key === 'hidden') node.hidden = true;
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children.flat()) {
      if (child !== null && child !== undefined && child !== false) node.append(child);
    }
    return node;
  }

  const numberFormat = new Intl.NumberFormat('en');
  const fmt = (n) => numberFormat.format(n || 0);
  // Money in the network's currency (issue 38 item 2: the session names it), in the browser's
  // locale: at least 2 decimals, up to 4 (a CPM campaign's impression costs a thousandth of its
  // bid).
  let moneyFormat = null;
  function setCurrency(code) {
    state.currency = code || 'USD';
    try {
      moneyFormat = new Intl.NumberFormat(undefined, { style: 'currency', currency: state.currency,
                                                       minimumFractionDigits: 2, maximumFractionDigits: 4 });
    } catch (e) {
      moneyFormat = null;  // a code the browser does not know: the number and the code
    }
  }
  setCurrency('USD');
  const money = (n) => moneyFormat ? moneyFormat.format(Number(n) || 0)
      : (Number(n) || 0).toFixed(2) + ' ' + state.currency;
  const percent = (x) => (x === null || x === undefined || Number.isNaN(x)) ? '–'
      : (100 * x).toFixed(2) + ' %';
  const utcDay = (date) => date.toISOString().slice(0, 10);

  // The `count` UTC days ending today: [from, to) with `to` tomorrow's midnight.
  function lastDays(count) {
    const now = new Date();
    const tomorrow = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
    const days = [];
    for (let i = count; i >= 1; i--) days.push(utcDay(new Date(tomorrow.getTime() - i * 86400e3)));
    return { from: days[0], to: utcDay(tomorrow), days };
  }

  // Issue 38 item 1: the period a report shows, kept in the page's URL so that a view can be
  // shared: `#/path?range=30&granularity=hour`, or `range=custom&from=2026-11-01&to=2026-11-14`
  // (days inclusive). Times are UTC days and hours, as the API's rollups.
  const PRESETS = [['today', 'Today'], ['7', 'Last 7 days'], ['14', 'Last 14 days'],
                   ['30', 'Last 30 days'], ['90', 'Last 90 days'], ['custom', 'Custom']];
  // Hourly rows for at most this many days (the API keeps hourly rollups for a while, and a
  // chart of more hours is unreadable).
  const MAX_HOURLY_DAYS = 14;
  const DAY_MS = 86400e3;
  const isDay = (text) => /^\d{4}-\d{2}-\d{2}$/.test(text || '') && !Number.isNaN(Date.parse(text + 'T00:00:00Z'));

  function hashParams() { return new URLSearchParams(location.hash.split('?')[1] || ''); }

  // The period of the current URL (`fallback`: the preset when it names none).
  function period(fallback) {
    const params = hashParams();
    const now = new Date();
    const tomorrow = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    let range = params.get('range') || fallback || '14';
    if (!PRESETS.some(([v]) => v === range)) range = fallback || '14';
    let from;
    let to = tomorrow;
    if (range === 'custom' && isDay(params.get('from')) && isDay(params.get('to')) &&
        params.get('from') <= params.get('to')) {
      from = Date.parse(params.get('from') + 'T00:00:00Z');
      to = Date.parse(params.get('to') + 'T00:00:00Z') + DAY_MS;
    } else {
      if (range === 'custom') range = fallback || '14';
      from = tomorrow - (range === 'today' ? 1 : Number(range)) * DAY_MS;
    }
    const days = Math.round((to - from) / DAY_MS);
    const hourly = params.get('granularity') === 'hour' && days <= MAX_HOURLY_DAYS;
    const step = hourly ? 3600e3 : DAY_MS;
    const buckets = [];
    for (let t = from; t < to; t += step) buckets.push(new Date(t).toISOString().slice(0, hourly ? 13 : 10));
    const first = utcDay(new Date(from));
    const last = utcDay(new Date(to - DAY_MS));
    const preset = PRESETS.find(([v]) => v === range);
    return {
      range, granularity: hourly ? 'hour' : 'day', from: first, to: utcDay(new Date(to)), last, days, buckets,
      // The bucket a report row belongs to, and the label of a bucket.
      keyOf: (row) => String(row.time).slice(0, hourly ? 13 : 10),
      label: (b) => hourly ? (days === 1 ? b.slice(11) + ':00' : b.slice(5, 10) + ' ' + b.slice(11) + 'h') : b.slice(5),
      bucketName: hourly ? 'Hour' : 'Day',
      title: range === 'custom' ? (first === last ? first : first + ' to ' + last) : preset[1],
      hourlyAllowed: days <= MAX_HOURLY_DAYS,
    };
  }

  // Replaces the URL's period parameters (keeping the path and any other parameter); the
  // router renders the page again.
  function setPeriod(changes) {
    const [path] = location.hash.replace(/^#/, '').split('?');
    const params = hashParams();
    for (const [k, v] of Object.entries(changes)) {
      if (v === undefined || v === null || v === '') params.delete(k); else params.set(k, v);
    }
    if (params.get('range') !== 'custom') { params.delete('from'); params.delete('to'); }
    const q = params.toString();
    location.hash = '#' + (path || '/') + (q ? '?' + q : '');
  }

  // The period's controls: a preset, the custom days, the granularity, and the time zone.
  function periodControl(p) {
    const preset = select(PRESETS, p.range, { 'aria-label': 'Period' });
    const from = el('input', { type: 'date', value: p.from, 'aria-label': 'From (UTC day)' });
    const to = el('input', { type: 'date', value: p.last, 'aria-label': 'To (UTC day, included)' });
    const granularity = select([['day', 'Per day'], ['hour', 'Per hour']], p.granularity,
                               { 'aria-label': 'Granularity' });
    if (!p.hourlyAllowed) granularity.options[1].disabled = true;
    const apply = el('button', { type: 'submit', text: 'Show' });
    const custom = el('span', { class: 'period-custom', hidden: p.range !== 'custom' }, from, ' – ', to, apply);
    const form = el('form', { class: 'period', 'aria-label': 'Report period' },
                    preset, custom, granularity,
                    el('span', { class: 'muted', text: 'UTC' + (p.hourlyAllowed ? '' : '; hourly for up to ' + MAX_HOURLY_DAYS + ' days') }));
    preset.addEventListener('change', () => {
      if (preset.value === 'custom') { custom.hidden = false; from.focus(); return; }
      setPeriod({ range: preset.value });
    });
    granularity.addEventListener('change', () => setPeriod({ granularity: granularity.value === 'hour' ? 'hour' : null }));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (!isDay(from.value) || !isDay(to.value) || from.value > to.value) {
        from.setAttribute('aria-invalid', 'true');
        return;
      }
      setPeriod({ range: 'custom', from: from.value, to: to.value });
    });
    return form;
  }

  // A link that downloads `path`'s report as CSV (the API's format=csv, with the session).
  function csvLink(path, params, name) {
    return el('a', { class: 'csv', href: path + '?' + query(Object.assign({}, params, { format: 'csv' })),
                     download: name + '.csv', text: 'Download CSV' });
  }

  // Chains by id (issue 38 items 3 and 6): their names in pickers and tables, and the block
  // explorer a transaction links to: the server's list (admin::DefaultChains and
  // [[network.chains]]), from the session's answer (setChains).
  const chains = new Map();
  function setChains(list) {
    if (!Array.isArray(list)) return;
    chains.clear();
    for (const c of list) chains.set(Number(c.id), [c.name, c.explorer || '']);
  }
  // [[id, name]] of the named chains, by name (a chain picker's options).
  const chainOptions = () => [...chains.entries()].map(([id, c]) => [id, c[0] + ' (' + id + ')'])
    .sort((a, b) => a[1].localeCompare(b[1]));
  const chainName = (id) => (chains.has(Number(id)) ? chains.get(Number(id))[0] + ' (' + id + ')' : String(id));
  // A transaction hash shortened to its ends (the whole in the title), linked to the chain's
  // explorer when it has one.
  function txLink(chainId, hash) {
    const text = String(hash || '');
    const short = text.length > 14 ? text.slice(0, 8) + '…' + text.slice(-6) : text;
    const code = el('code', { class: 'hash', title: text, text: short });
    const chain = chains.get(Number(chainId));
    if (!chain || !chain[1] || !/^0x[0-9a-fA-F]{64}$/.test(text)) return code;
    return el('a', { href: chain[1] + '/tx/' + text, target: '_blank', rel: 'noopener noreferrer',
                     'aria-label': 'Transaction ' + text + ' on ' + chain[0] }, code);
  }
  // An address linked to the chain's explorer when it has one.
  function addressLink(chainId, address) {
    const code = el('code', { class: 'hash', text: String(address || '') });
    const chain = chains.get(Number(chainId));
    if (!chain || !chain[1] || !/^0x[0-9a-fA-F]{40}$/.test(String(address))) return code;
    return el('a', { href: chain[1] + '/address/' + address, target: '_blank', rel: 'noopener noreferrer',
                     'aria-label': 'Address ' + address + ' on ' + chain[0] }, code);
  }

  function query(params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
    return q.toString();
  }

  // A labelled form control with its hint and its error line. `name` is the API's field name
  // (`pricing.bid`), so the API's details[{field}] find it (showErrors).
  // `idPrefix` keeps ids unique where a page holds several forms with the same field (the
  // review queue's reason fields); errors still map by `name` (data-field).
  function field(name, label, control, hint, idPrefix) {
    const id = 'f-' + (idPrefix || '') + name.replace(/[^A-Za-z0-9]+/g, '-');
    control.id = id;
    control.dataset.field = name;
    const describedBy = [];
    let hintNode = null;
    if (hint) {
      hintNode = el('p', { class: 'hint', id: id + '-hint', text: hint });
      describedBy.push(hintNode.id);
    }
    const error = el('p', { class: 'field-error', id: id + '-error', 'aria-live': 'polite' });
    describedBy.push(error.id);
    control.setAttribute('aria-describedby', describedBy.join(' '));
    const wrap = el('div', { class: 'field' }, el('label', { for: id, text: label }), control, hintNode, error);
    return wrap;
  }

  function input(props) { return el('input', Object.assign({ type: 'text' }, props)); }

  function select(options, value, props) {
    const node = el('select', props || {});
    for (const option of options) {
      const [v, text] = Array.isArray(option) ? option : [option, option];
      node.append(el('option', { value: String(v), text: String(text) }));
    }
    if (value !== undefined && value !== null) node.value = String(value);
    return node;
  }

  function clearErrors(form) {
    for (const p of form.querySelectorAll('.field-error')) p.replaceChildren();
    for (const c of form.querySelectorAll('[aria-invalid]')) c.removeAttribute('aria-invalid');
    const general = form.querySelector('.form-error');
    if (general) general.textContent = '';
  }

  // The control of an API error field: exact name, then without array indexes
  // (`targeting.projects[1]`), then the first control inside it (`budget` → `budget.total`),
  // then its parent (`payout.model` → `payout`).
  function controlFor(form, name) {
    const find = (n) => form.querySelector('[data-field="' + CSS.escape(n) + '"]');
    const plain = name.replace(/\[\d+\]/g, '');
    for (const candidate of [name, plain]) {
      const node = find(candidate);
      if (node) return node;
    }
    for (const node of form.querySelectorAll('[data-field]')) {
      if (node.dataset.field.startsWith(plain + '.')) return node;
    }
    let parent = plain;
    while (parent.includes('.')) {
      parent = parent.slice(0, parent.lastIndexOf('.'));
      const node = find(parent);
      if (node) return node;
    }
    return null;
  }

  function errorLineOf(form, control) {
    return form.querySelector('#' + CSS.escape(control.id + '-error')) || document.getElementById(control.id + '-error');
  }

  // Issue 38 bug 3: a field the user corrects stops showing its error at once (not only when
  // the form is sent again).
  function clearWhenEdited(form, control) {
    const clear = () => {
      control.removeAttribute('aria-invalid');
      const error = errorLineOf(form, control);
      if (error) error.replaceChildren();
      control.removeEventListener('input', clear);
      control.removeEventListener('change', clear);
    };
    control.addEventListener('input', clear);
    control.addEventListener('change', clear);
  }

  // Shows an API error answer: each details[{field, message}] next to its control, one line per
  // message (issue 38 bug 5: several on one field were run together); the rest in the form's
  // general error line. Focuses the invalid control that comes first in the form (bug 4: not
  // the first the API named).
  function showErrors(form, res) {
    clearErrors(form);
    const general = [];
    let any = false;
    for (const detail of (res.json && res.json.details) || []) {
      const control = detail.field ? controlFor(form, detail.field) : null;
      if (!control) { general.push((detail.field ? detail.field + ': ' : '') + detail.message); continue; }
      if (control.getAttribute('aria-invalid') !== 'true') clearWhenEdited(form, control);
      control.setAttribute('aria-invalid', 'true');
      const error = errorLineOf(form, control);
      if (error) {
        if (error.childNodes.length) error.append(el('br'));
        error.append(el('span', { class: 'field-error-message', text: detail.message }));
      }
      any = true;
    }
    const box = form.querySelector('.form-error');
    if (box) box.textContent = general.length ? general.join('; ') : (any ? '' : errorText(res));
    const first = any ? form.querySelector('[aria-invalid="true"]') : null;
    if (first) first.focus(); else if (box) box.focus();
  }

  function formError() { return el('p', { class: 'form-error error', role: 'alert', tabindex: '-1' }); }

  // Runs `action` with the form's submit buttons disabled.
  async function busy(form, action) {
    const buttons = form.querySelectorAll('button');
    buttons.forEach((b) => { b.disabled = true; });
    try { return await action(); } finally { buttons.forEach((b) => { b.disabled = false; }); }
  }

  const PALETTE = ['#2563eb', '#16a34a', '#c2410c', '#9333ea', '#0891b2', '#b91c1c', '#4d7c0f', '#a16207'];

  // A table: columns [{label, key | value(row), numeric}], rows, optional totals row.
  function table(caption, columns, rows, totals) {
    const head = el('tr', {}, columns.map((c) => el('th', { scope: 'col', class: c.numeric ? 'num' : null, text: c.label })));
    const cellOf = (c, row) => el('td', { class: c.numeric ? 'num' : null },
                                  c.value ? c.value(row) : String(row[c.key] ?? ''));
    const body = rows.map((row) => el('tr', {}, columns.map((c) => cellOf(c, row))));
    const id = 't-' + Math.random().toString(36).slice(2, 9);
    const tableNode = el('table', {},
                         el('caption', { id, text: caption }),
                         el('thead', {}, head), el('tbody', {}, body),
                         totals ? el('tfoot', {}, el('tr', {}, columns.map((c) => cellOf(c, totals)))) : null);
    if (!rows.length) {
      tableNode.tBodies[0].append(el('tr', {}, el('td', { colspan: columns.length, class: 'muted', text: 'No data.' })));
    }
    return el('div', { class: 'table-box', tabindex: '0', role: 'region', 'aria-labelledby': id }, tableNode);
  }

  // Charts next to a table of the same numbers. `chart`: {labels, datasets: [{label, data,
  // axis?}], type?, yTitle?, y1Title?, y2Title?, title?}, or an array of them drawn one under
  // the other (issue 38 item 6: one series per axis, so several measures take several charts).
  // Appended to `parent`, then drawn (Chart.js sizes the canvas from its box). Charts are
  // destroyed on the next route change.
  function report(parent, title, chart, tableNode, csv) {
    const specs = Array.isArray(chart) ? chart : [chart];
    const canvases = specs.map((spec) => el('canvas', {
      role: 'img', 'aria-label': (spec.title ? title + ': ' + spec.title : title) + '; the same numbers are in the table' }));
    const section = el('section', { class: 'report-block' },
                       el('div', { class: 'report-head' }, el('h3', { text: title }), csv || null),
                       el('div', { class: 'report' },
                          el('div', { class: 'charts' }, specs.map((spec, i) =>
                            el('figure', { class: 'chart' },
                               spec.title && specs.length > 1 ? el('figcaption', { text: spec.title }) : null,
                               el('div', { class: 'chart-box' }, canvases[i])))),
                          tableNode));
    parent.append(section);
    if (typeof Chart === 'undefined') return section;
    specs.forEach((spec, i) => drawChart(canvases[i], spec));
    return section;
  }

  function drawChart(canvas, chart) {
    // `yFromData`: the left axis starts near the data's low instead of 0 (issue 38 item 6: fill
    // rates between 96 and 100 % were flat lines on a 0-100 scale).
    const scales = { y: { beginAtZero: !chart.yFromData, grace: chart.yFromData ? '5%' : 0, position: 'left',
                          title: { display: !!chart.yTitle, text: chart.yTitle || '' } } };
    for (const axis of ['y1', 'y2']) {
      if (!chart.datasets.some((d) => d.axis === axis)) continue;
      scales[axis] = { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false },
                       title: { display: !!chart[axis + 'Title'], text: chart[axis + 'Title'] || '' } };
    }
    // Issue 38 item 6: lines that overlap (fill rates of several adUnitIds at 100 %) stay apart
    // by their dash and point style, not only their colour.
    const DASHES = [[], [6, 4], [2, 3], [10, 3, 2, 3]];
    const POINTS = ['circle', 'rect', 'triangle', 'rectRot', 'crossRot', 'star'];
    const offset = chart.colorOffset || 0;
    const datasets = chart.datasets.map((d, j) => {
      const i = j + offset;
      return {
        label: d.label, data: d.data, yAxisID: d.axis || 'y', tension: 0.2,
        pointRadius: 3 + (i % 3), pointStyle: POINTS[i % POINTS.length], borderDash: DASHES[i % DASHES.length],
        borderColor: PALETTE[i % PALETTE.length], backgroundColor: PALETTE[i % PALETTE.length],
        spanGaps: true,
      };
    });
    state.charts.push(new Chart(canvas, {
      type: chart.type || 'line', data: { labels: chart.labels, datasets },
      options: { responsive: true, maintainAspectRatio: false, animation: false,
                 interaction: { mode: 'index', intersect: false }, scales },
    }));
  }

  function destroyCharts() {
    for (const c of state.charts) c.destroy();
    state.charts = [];
  }

  // Registers a page: `pattern` like '/campaigns/:id'; `roles` that may open it.
  function route(pattern, roles, render) {
    const names = [];
    const re = new RegExp('^' + pattern.replace(/:(\w+)/g, (m, n) => { names.push(n); return '(\\d+)'; }) + '$');
    routes.push({ re, names, roles, render });
  }

  function match(path) {
    for (const r of routes) {
      const m = r.re.exec(path);
      if (!m) continue;
      const params = {};
      r.names.forEach((n, i) => { params[n] = Number(m[i + 1]); });
      return { route: r, params };
    }
    return null;
  }

  // A destructive action asks first (issue 38 item 3): the button opens, in its place, what the
  // action does and Confirm / Cancel; Confirm runs `action` (which reports its own errors).
  function confirmButton(text, label, question, action) {
    const box = el('span', { class: 'confirm-box' });
    const trigger = el('button', { type: 'button', class: 'secondary', text, 'aria-label': label });
    const ask = () => {
      const yes = el('button', { type: 'button', class: 'danger', text: 'Confirm: ' + text.toLowerCase(),
                                 'aria-label': 'Confirm: ' + label });
      const no = el('button', { type: 'button', class: 'secondary', text: 'Cancel' });
      yes.addEventListener('click', async () => { yes.disabled = true; no.disabled = true; await action(); });
      no.addEventListener('click', () => { box.replaceChildren(trigger); trigger.focus(); });
      box.replaceChildren(el('span', { class: 'confirm-question', role: 'alert', text: question + ' ' }), yes, ' ', no);
      yes.focus();
    };
    trigger.addEventListener('click', ask);
    box.append(trigger);
    return box;
  }

  // A page heading the router focuses after navigation.
  function heading(text) { return el('h2', { class: 'page-title', tabindex: '-1', text }); }

  function notice(text, cls) { return el('p', { class: cls || 'muted', text }); }

  const isOperator = () => state.user && state.user.role === 'operator';

  return {
    state, api, load, errorText, NotFound, SignedOut, el, fmt, money, setCurrency, percent, utcDay, lastDays,
    hashParams, period, setPeriod, periodControl, csvLink, chainName, chainOptions, setChains, txLink, addressLink, query, field, input, select, clearErrors, showErrors, formError, busy, table, report,
    destroyCharts, route, match, heading, notice, isOperator, confirmButton,
  };
})();
