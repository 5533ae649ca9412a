// adserver console (issue 16): sign in and out, who is signed in, the navigation per role, the
// hash router (`#/campaigns/12`) over the pages of publisher.js, advertiser.js and operator.js,
// and the overview (`#/`: a period, by default the last 14 days, as a chart and a table; issue 38
// item 1: any period, per day or hour, kept in the URL, and its CSV). Plain JS, no build.
// The session is an HttpOnly cookie; writes send the CSRF token the session endpoint returns.
'use strict';

(function (C) {
  // Remembers (not a secret) that this browser signed in, so a fresh visit does not probe the
  // session endpoint just to get a 401.
  const SIGNED_IN_HINT = 'adserver.console.signedIn';

  const $ = (id) => document.getElementById(id);
  const state = C.state;
  const api = C.api;

  function show(view) {
    $('loading').hidden = true;
    $('sign-in-view').hidden = view !== 'sign-in';
    $('dashboard-view').hidden = view !== 'dashboard';
    $('page-view').hidden = view !== 'page';
    $('who').hidden = view === 'sign-in';
    $('nav').hidden = view === 'sign-in';
  }

  function describeUser(user) {
    let scope = 'all tenants';
    if (user.role === 'publisher') scope = 'publisher ' + user.publisherId;
    if (user.role === 'advertiser') scope = 'community ' + user.communityId;
    return user.email + ' · ' + user.role + ' · ' + scope;
  }

  // The money columns each role sees (issue 38 item 2; the API leaves out the others: spend is
  // the operator's revenue and the advertiser's cost, earnings the publishers' payouts).
  function moneyColumns(role) {
    if (role === 'operator') return [['spend', 'Revenue'], ['earnings', 'Payouts']];
    if (role === 'advertiser') return [['spend', 'Spend']];
    return [['earnings', 'Earnings']];
  }
  const METRICS = ['requests', 'fills', 'impressions', 'clicks', 'conversions', 'spend', 'earnings'];

  // Report rows exist only for buckets with traffic; the chart and table show every bucket of
  // the period (C.period: days or hours).
  function perBucket(rows, period) {
    const zero = () => Object.fromEntries(METRICS.map((k) => [k, 0]));
    const byKey = new Map(period.buckets.map((b) => [b, zero()]));
    for (const row of rows || []) {
      const bucket = byKey.get(period.keyOf(row));
      if (!bucket) continue;
      for (const k of METRICS) bucket[k] += Number(row[k]) || 0;
    }
    return period.buckets.map((b) => ({ day: b.replace('T', ' ') + (b.length > 10 ? ':00' : ''), label: period.label(b), ...byKey.get(b) }));
  }

  function cell(tag, text) {
    const el = document.createElement(tag);
    el.textContent = text;
    return el;
  }

  function renderTable(series, role) {
    const fmt = new Intl.NumberFormat('en');
    const money = moneyColumns(role);
    const head = $('daily-table').tHead.rows[0];
    head.replaceChildren(...[period().bucketName, 'Impressions', 'Clicks', 'Conversions', ...money.map(([, label]) => label)]
      .map((text, i) => { const th = cell('th', text); th.scope = 'col'; if (i === 0) th.id = 'daily-bucket'; return th; }));
    const body = $('daily-table').tBodies[0];
    body.replaceChildren();
    const row = (first, s) => {
      const tr = document.createElement('tr');
      tr.append(cell('td', first), cell('td', fmt.format(s.impressions)),
                cell('td', fmt.format(s.clicks)), cell('td', fmt.format(s.conversions)),
                ...money.map(([key]) => cell('td', C.money(s[key]))));
      return tr;
    };
    for (const s of series) body.append(row(s.day, s));
    $('daily-table').tFoot.replaceChildren(row('Total', totalOf(series)));
  }

  function totalOf(series) {
    const total = Object.fromEntries(METRICS.map((k) => [k, 0]));
    for (const s of series) for (const k of METRICS) total[k] += s[k];
    return total;
  }

  // The period's money at a glance, per role: the operator's revenue, payouts and margin; the
  // advertiser's spend, eCPM, CPC, CPA and today's burn of the daily budgets; the publisher's
  // earnings, eCPM and fill rate (per placement on the reports page).
  async function renderSummary(series, role) {
    const t = totalOf(series);
    const per = (amount, count) => (count > 0 ? C.money(amount / count) : '–');
    const tiles = [];
    if (role === 'operator') {
      tiles.push(['Revenue', C.money(t.spend)], ['Publisher payouts', C.money(t.earnings)],
                 ['Margin', C.money(t.spend - t.earnings) + (t.spend > 0 ? ' (' + C.percent((t.spend - t.earnings) / t.spend) + ')' : '')],
                 ['eCPM', per(t.spend * 1000, t.impressions)], ['Fill rate', C.percent(t.requests ? t.fills / t.requests : null)]);
    } else if (role === 'advertiser') {
      tiles.push(['Spend', C.money(t.spend)], ['eCPM', per(t.spend * 1000, t.impressions)],
                 ['CPC', per(t.spend, t.clicks)], ['CPA', per(t.spend, t.conversions)]);
    } else {
      tiles.push(['Earnings', C.money(t.earnings)], ['eCPM', per(t.earnings * 1000, t.impressions)],
                 ['Fill rate', C.percent(t.requests ? t.fills / t.requests : null)]);
    }
    const box = $('report-summary');
    const render = (extra) => box.replaceChildren(...tiles.concat(extra).map(([label, value]) =>
      C.el('div', { class: 'tile' }, C.el('span', { class: 'tile-label', text: label }), C.el('strong', { text: value }))));
    render([]);
    if (role === 'publisher') {
      box.append(C.el('a', { href: '#/publishers/' + state.user.publisherId + '/reports', text: 'Fill rate and earnings per placement' }));
    }
    if (role !== 'advertiser') return;
    // Today's spend against the daily budgets of the active campaigns that have one.
    const today = C.lastDays(1);
    const [campaigns, spent] = await Promise.all([
      api('GET', '/admin/v1/campaigns'),
      api('GET', '/admin/v1/reports?' + C.query({ granularity: 'total', from: today.from, to: today.to }))]);
    if (campaigns.status !== 200 || spent.status !== 200) return;
    const list = campaigns.json.campaigns || [];
    const budgets = list.filter((c) => c.status === 'active' && c.budget && c.budget.daily)
                        .reduce((a, c) => a + Number(c.budget.daily), 0);
    const todaySpend = Number(spent.json.totals.spend) || 0;
    render([['Spent today (UTC)', C.money(todaySpend) + (budgets > 0 ? ' of ' + C.money(budgets) + ' daily budgets (' +
                                                         C.percent(todaySpend / budgets) + ')' : '')]]);
  }

  function period() { return C.period('14'); }

  function renderChart(series) {
    if (typeof Chart === 'undefined') {
      $('report-error').textContent = 'The chart library did not load; the table shows the numbers.';
      return;
    }
    const labels = series.map((s) => s.label);
    const dataset = (label, key, color, axis) => ({
      label, data: series.map((s) => s[key]), borderColor: color, backgroundColor: color,
      yAxisID: axis, tension: 0.2, pointRadius: 3,
    });
    const data = {
      labels,
      // Issue 38 item 6: one series per axis (clicks and conversions shared one).
      datasets: [dataset('Impressions', 'impressions', '#2563eb', 'y'),
                 dataset('Clicks', 'clicks', '#16a34a', 'y1'),
                 dataset('Conversions', 'conversions', '#c2410c', 'y2')],
    };
    if (state.chart) {
      state.chart.data = data;
      state.chart.update();
      return;
    }
    state.chart = new Chart($('daily-chart'), {
      type: 'line', data,
      options: {
        responsive: true, maintainAspectRatio: false, animation: false,
        interaction: { mode: 'index', intersect: false },
        scales: {
          y: { beginAtZero: true, position: 'left', title: { display: true, text: 'Impressions (count)' } },
          y1: { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false },
                title: { display: true, text: 'Clicks (count)' } },
          y2: { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false },
                title: { display: true, text: 'Conversions (count)' } },
        },
      },
    });
  }

  async function loadReport() {
    $('report-error').textContent = '';
    const period = C.period('14');
    const params = { granularity: period.granularity, from: period.from, to: period.to };
    $('report-summary').replaceChildren();
    $('report-title').textContent = period.title;
    $('report-period').replaceChildren(C.periodControl(period),
                                       C.csvLink('/admin/v1/reports', params, 'report-' + period.from + '-' + period.last));
    $('daily-caption').textContent = (period.granularity === 'hour' ? 'Per hour' : 'Per day') + ' (UTC)';
    let res;
    try {
      res = await api('GET', '/admin/v1/reports?' + C.query(params));
    } catch (e) {
      res = { status: 0, json: { error: 'the server could not be reached' } };
    }
    if (res.status === 401) return signedOut();
    const rows = res.status === 200 && res.json ? res.json.rows : [];
    if (res.status !== 200) {
      $('report-error').replaceChildren('Could not load the report: ' +
          ((res.json && res.json.error) || 'HTTP ' + res.status),
          C.el('button', { type: 'button', class: 'retry', text: 'Try again', onclick: () => render() }));
    }
    const series = perBucket(rows, period);
    renderTable(series, state.user.role);
    renderChart(series);
    await renderSummary(series, state.user.role);
  }

  // The pages of each role; operators see every tenant's pages through the pickers.
  function navLinks(user) {
    const links = [['#/', 'Overview']];
    if (user.role === 'publisher') {
      links.push(['#/publishers/' + user.publisherId, 'Keys & settings'],
                 ['#/publishers/' + user.publisherId + '/reports', 'Reports']);
    }
    if (user.role === 'advertiser') {
      links.push(['#/campaigns', 'Campaigns'], ['#/ads', 'Ads'], ['#/communities/' + user.communityId + '/keys', 'Keys']);
    }
    if (user.role === 'operator') {
      links.push(['#/publishers', 'Publishers'], ['#/communities', 'Communities'], ['#/campaigns', 'Campaigns'], ['#/ads', 'Ads'],
                 ['#/projects', 'Projects'], ['#/review', 'Review'],
                 ['#/users', 'Users'], ['#/health', 'Health']);
    }
    links.push(['#/account', 'Account']);
    return links;
  }

  function renderNav() {
    const current = '#' + currentPath();
    const items = navLinks(state.user).map(([href, text]) => {
      const active = href === current || (href !== '#/' && current.startsWith(href + '/'));
      return C.el('li', {}, C.el('a', { href, text, 'aria-current': active ? 'page' : null }));
    });
    $('nav-list').replaceChildren(...items);
  }

  function currentPath() {
    const path = location.hash.replace(/^#/, '').split('?')[0];
    return path === '' ? '/' : path;
  }

  // The signed-in user's own password (POST /console/api/password; other sessions end).
  C.route('/account', ['operator', 'advertiser', 'publisher'], async (root) => {
    const current = C.input({ type: 'password', autocomplete: 'current-password' });
    const next = C.input({ type: 'password', autocomplete: 'new-password' });
    const done = C.el('p', { class: 'ok', role: 'status' });
    const form = C.el('form', { class: 'card form', novalidate: true, 'aria-labelledby': 'password-title' },
      C.el('h3', { id: 'password-title', text: 'Change password' }),
      C.field('currentPassword', 'Current password', current),
      C.field('password', 'New password', next, 'At least 10 characters. Your other sessions end.'),
      C.formError(), done, C.el('button', { type: 'submit', text: 'Change password' }));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      done.textContent = '';
      C.busy(form, async () => {
        const res = await api('POST', '/console/api/password', { currentPassword: current.value, password: next.value });
        if (res.status !== 200) return C.showErrors(form, res);
        C.clearErrors(form);
        current.value = '';
        next.value = '';
        done.textContent = 'Password changed.';
      });
    });
    root.append(C.heading('Account'), C.notice(describeUser(state.user)), form);
  });

  function notFound(root) {
    root.replaceChildren(C.heading('Not found'),
                         C.notice('This page does not exist, or it belongs to another tenant.', 'error'),
                         C.el('p', {}, C.el('a', { href: '#/', text: 'Back to the overview' })));
  }

  // Renders the page of the current hash. A 404 from the API is "Not found"; a 401 signs out.
  let renderId = 0;
  async function render() {
    if (!state.user) return;
    const id = ++renderId;
    C.destroyCharts();
    renderNav();
    const path = currentPath();
    if (path === '/') {
      show('dashboard');
      await loadReport();
      if (id === renderId) $('report-title').focus();
      return;
    }
    // The page renders into its box in the document (Chart.js sizes a canvas from its box).
    const root = C.el('div', { class: 'page' });
    // Pages append optional parts as `cond ? node : null`; the DOM's append would write "null".
    root.append = (...nodes) => Element.prototype.append.apply(root, nodes.flat().filter((n) => n !== null && n !== undefined && n !== false));
    const loading = C.notice('Loading…');
    $('page-view').replaceChildren(loading, root);
    show('page');
    const found = C.match(path);
    try {
      if (!found || !found.route.roles.includes(state.user.role)) throw new C.NotFound(path);
      await found.route.render(root, found.params);
    } catch (e) {
      if (e instanceof C.SignedOut) return signedOut();
      if (e instanceof C.NotFound) notFound(root);
      // Issue 38 item 6: a failed fetch (the network, a busy server) can be tried again.
      else root.replaceChildren(C.heading('Something went wrong'), C.notice(e.message, 'error'),
                                C.el('button', { type: 'button', class: 'retry', text: 'Try again', onclick: () => render() }));
    }
    if (id !== renderId) return;  // a newer navigation replaced this page
    loading.remove();
    const title = root.querySelector('.page-title');
    if (title) title.focus();
  }
  C.rerender = render;

  function signedIn(session) {
    state.csrfToken = session.csrfToken;
    state.user = session.user;
    C.setCurrency(session.currency);
    C.setChains(session.chains);
    localStorage.setItem(SIGNED_IN_HINT, '1');
    $('who-text').textContent = describeUser(session.user);
    return render();
  }

  function signedOut() {
    state.csrfToken = '';
    state.user = null;
    localStorage.removeItem(SIGNED_IN_HINT);
    if (state.chart) { state.chart.destroy(); state.chart = null; }
    C.destroyCharts();
    $('page-view').replaceChildren();
    $('password').value = '';
    show('sign-in');
  }

  async function onSignIn(event) {
    event.preventDefault();
    const error = $('sign-in-error');
    error.textContent = '';
    const form = event.currentTarget;
    if (!form.reportValidity()) return;
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      const res = await api('POST', '/console/api/session',
                            { email: $('email').value.trim(), password: $('password').value });
      if (res.status === 201 && res.json) {
        $('password').value = '';
        await signedIn(res.json);
        return;
      }
      error.textContent = res.status === 401 ? 'Wrong email or password.'
          : (res.json && res.json.error) || 'Sign-in failed (HTTP ' + res.status + ').';
      $('password').focus();
    } catch (e) {
      error.textContent = 'The server could not be reached.';
    } finally {
      button.disabled = false;
    }
  }

  async function onSignOut() {
    try {
      await api('DELETE', '/console/api/session');
    } finally {
      signedOut();
      $('email').focus();
    }
  }

  async function start() {
    $('sign-in-form').addEventListener('submit', onSignIn);
    $('sign-out').addEventListener('click', onSignOut);
    window.addEventListener('hashchange', () => { render(); });
    if (localStorage.getItem(SIGNED_IN_HINT) !== '1') return signedOut();
    try {
      const res = await api('GET', '/console/api/session');
      if (res.status === 200 && res.json) return signedIn(res.json);
    } catch (e) {
      // Fall through to the form.
    }
    return signedOut();
  }

  start();
})(window.AdConsole);
