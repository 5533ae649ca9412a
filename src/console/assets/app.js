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

  // Report rows exist only for buckets with traffic; the chart and table show every bucket of
  // the period (C.period: days or hours).
  function perBucket(rows, period) {
    const byKey = new Map(period.buckets.map((b) => [b, { impressions: 0, clicks: 0, conversions: 0 }]));
    for (const row of rows || []) {
      const bucket = byKey.get(period.keyOf(row));
      if (!bucket) continue;
      bucket.impressions += row.impressions || 0;
      bucket.clicks += row.clicks || 0;
      bucket.conversions += row.conversions || 0;
    }
    return period.buckets.map((b) => ({ day: b.replace('T', ' ') + (b.length > 10 ? ':00' : ''), label: period.label(b), ...byKey.get(b) }));
  }

  function cell(tag, text) {
    const el = document.createElement(tag);
    el.textContent = text;
    return el;
  }

  function renderTable(series) {
    const fmt = new Intl.NumberFormat('en');
    const body = $('daily-table').tBodies[0];
    body.replaceChildren();
    const total = { impressions: 0, clicks: 0, conversions: 0 };
    for (const s of series) {
      const tr = document.createElement('tr');
      tr.append(cell('td', s.day), cell('td', fmt.format(s.impressions)),
                cell('td', fmt.format(s.clicks)), cell('td', fmt.format(s.conversions)));
      body.append(tr);
      total.impressions += s.impressions;
      total.clicks += s.clicks;
      total.conversions += s.conversions;
    }
    const foot = $('daily-table').tFoot;
    const tr = document.createElement('tr');
    tr.append(cell('td', 'Total'), cell('td', fmt.format(total.impressions)),
              cell('td', fmt.format(total.clicks)), cell('td', fmt.format(total.conversions)));
    foot.replaceChildren(tr);
  }

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
      datasets: [dataset('Impressions', 'impressions', '#2563eb', 'y'),
                 dataset('Clicks', 'clicks', '#16a34a', 'y1'),
                 dataset('Conversions', 'conversions', '#c2410c', 'y1')],
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
          y: { beginAtZero: true, position: 'left', title: { display: true, text: 'Impressions' } },
          y1: { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false },
                title: { display: true, text: 'Clicks, conversions' } },
        },
      },
    });
  }

  async function loadReport() {
    $('report-error').textContent = '';
    const period = C.period('14');
    const params = { granularity: period.granularity, from: period.from, to: period.to };
    $('report-title').textContent = period.title;
    $('report-period').replaceChildren(C.periodControl(period),
                                       C.csvLink('/admin/v1/reports', params, 'report-' + period.from + '-' + period.last));
    $('daily-bucket').textContent = period.bucketName;
    $('daily-caption').textContent = (period.granularity === 'hour' ? 'Per hour' : 'Per day') + ' (UTC)';
    const res = await api('GET', '/admin/v1/reports?' + C.query(params));
    if (res.status === 401) return signedOut();
    const rows = res.status === 200 && res.json ? res.json.rows : [];
    if (res.status !== 200) {
      $('report-error').textContent = 'Could not load the report: ' +
          ((res.json && res.json.error) || 'HTTP ' + res.status);
    }
    const series = perBucket(rows, period);
    renderTable(series);
    renderChart(series);
  }

  // The pages of each role; operators see every tenant's pages through the pickers.
  function navLinks(user) {
    const links = [['#/', 'Overview']];
    if (user.role === 'publisher') {
      links.push(['#/publishers/' + user.publisherId, 'Keys & settings'],
                 ['#/publishers/' + user.publisherId + '/reports', 'Reports']);
    }
    if (user.role === 'advertiser') {
      links.push(['#/campaigns', 'Campaigns'], ['#/communities/' + user.communityId + '/keys', 'Keys']);
    }
    if (user.role === 'operator') {
      links.push(['#/publishers', 'Publishers'], ['#/campaigns', 'Campaigns'], ['#/review', 'Review'],
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
      else root.replaceChildren(C.heading('Something went wrong'), C.notice(e.message, 'error'));
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
