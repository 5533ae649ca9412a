// adserver console: operator pages. `#/users` (list, create, delete), `#/review` (the creative
// review queue with the preview: approve, or reject with a reason), `#/health` (readiness, the
// wallet table, the indexer's head and lag per chain from /readyz, requests per second from the
// minute rollups). The publisher and campaign pages of any tenant are in publisher.js and
// advertiser.js (`#/publishers`, `#/campaigns`).
'use strict';

(function (C) {
  const { el, api, load, field, input, select, fmt, table, report } = C;

  // A role with its tenant (a publisher's or a community's), shared by the new-user and the
  // change-role forms: the fields (`label` names the role's), the tenant field shown for the
  // chosen role only, and what the API takes (`tenant()`: publisherId / communityId, the other
  // null so that a role change drops it).
  function roleFields(publishers, communities, label, idPrefix) {
    const role = select([['advertiser', 'advertiser (one community)'], ['publisher', 'publisher (one publisher)'],
                         ['operator', 'operator (everything)']], 'advertiser');
    const publisherId = select(publishers.map((p) => [p.id, p.name + ' (#' + p.id + ')']));
    const communityId = select(communities.map((c) => [c.id, c.name + ' (#' + c.id + ')']));
    const publisherField = field('publisherId', 'Publisher', publisherId, null, idPrefix);
    const communityField = field('communityId', 'Community', communityId, null, idPrefix);
    const sync = () => {
      publisherField.hidden = role.value !== 'publisher';
      communityField.hidden = role.value !== 'advertiser';
    };
    role.addEventListener('change', sync);
    sync();
    return {
      nodes: [field('role', label, role, label === 'Role' ? null : 'Takes effect on their next request.', idPrefix),
              publisherField, communityField],
      value: () => ({
        role: role.value,
        publisherId: role.value === 'publisher' ? Number(publisherId.value) : null,
        communityId: role.value === 'advertiser' ? Number(communityId.value) : null,
      }),
    };
  }

  function userForm(publishers, communities) {
    const f = {
      email: input({ type: 'email', autocomplete: 'off' }),
      password: input({ type: 'password', autocomplete: 'new-password' }),
    };
    const role = roleFields(publishers, communities, 'Role');
    const form = el('form', { class: 'card form', novalidate: true, 'aria-labelledby': 'user-form-title' },
      el('h3', { id: 'user-form-title', text: 'New user' }),
      field('email', 'Email', f.email), field('password', 'Password', f.password, 'At least 10 characters.'),
      role.nodes, C.formError(), el('button', { type: 'submit', text: 'Create user' }));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      C.busy(form, async () => {
        const tenant = role.value();
        const body = { email: f.email.value.trim(), password: f.password.value, role: tenant.role };
        if (tenant.publisherId) body.publisherId = tenant.publisherId;
        if (tenant.communityId) body.communityId = tenant.communityId;
        const res = await api('POST', '/admin/v1/users', body);
        if (res.status !== 201) return C.showErrors(form, res);
        C.rerender();
      });
    });
    return form;
  }

  // 20 characters from a 62-letter alphabet (119 bits), from the browser's CSPRNG.
  function generatedPassword() {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    const out = [];
    const bytes = new Uint8Array(64);
    while (out.length < 20) {
      crypto.getRandomValues(bytes);
      for (const b of bytes) if (b < 248 && out.length < 20) out.push(alphabet[b % 62]);
    }
    return out.join('');
  }

  // Issue 38 item 3: a user's role and tenant changed (PATCH /users/{id}); the API drops the
  // other role's tenant.
  function roleForm(users, publishers, communities) {
    const others = users.filter((u) => u.id !== C.state.user.id);
    if (!others.length) return null;
    const user = select(others.map((u) => [u.id, u.email + ' (' + u.role + ')']));
    const role = roleFields(publishers, communities, 'New role', 'role-');
    const form = el('form', { class: 'card form', novalidate: true, 'aria-labelledby': 'role-form-title' },
      el('h3', { id: 'role-form-title', text: 'Change a role' }),
      field('user', 'User', user, null, 'role-'), role.nodes,
      C.formError(), el('button', { type: 'submit', text: 'Change role' }));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      C.busy(form, async () => {
        const res = await api('PATCH', '/admin/v1/users/' + user.value, role.value());
        if (res.status !== 200) return C.showErrors(form, res);
        C.rerender();
      });
    });
    return form;
  }

  C.route('/users', ['operator'], async (root) => {
    const [{ users }, { publishers }, { communities }] = await Promise.all([
      load('/admin/v1/users'), load('/admin/v1/publishers'), load('/admin/v1/communities')]);
    const error = el('p', { class: 'error', role: 'alert' });
    const tenant = (u) => (u.role === 'publisher' ? 'publisher #' + u.publisherId
      : u.role === 'advertiser' ? 'community #' + u.communityId : 'all tenants');
    const shown = el('div', { id: 'reset-slot', 'aria-live': 'polite' });
    // Issue 38 item 3: a password reset generates a password (shown once) and ends the user's
    // sessions and bearer tokens; deleting asks first.
    const reset = (u) => C.confirmButton('Reset password', 'Reset the password of ' + u.email,
      'Give ' + u.email + ' a new password? Their sessions and API tokens end.', async () => {
        const password = generatedPassword();
        const res = await api('PATCH', '/admin/v1/users/' + u.id, { password });
        if (res.status !== 200) { error.textContent = C.errorText(res); return; }
        await C.rerender();
        const value = el('code', { class: 'secret', id: 'reset-password', tabindex: '0', text: password });
        document.getElementById('reset-slot').replaceChildren(
          el('p', { text: 'New password of ' + u.email + ' (shown once; give it to them over a safe channel): ' }), value);
        value.focus();
      });
    const remove = (u) => (u.id === C.state.user.id ? el('span', { class: 'muted', text: 'you' })
      : C.confirmButton('Delete', 'Delete ' + u.email, 'Delete ' + u.email + '? They can no longer sign in; this cannot be undone.',
        async () => {
          const res = await api('DELETE', '/admin/v1/users/' + u.id);
          if (res.status !== 204) { error.textContent = C.errorText(res); return; }
          C.rerender();
        }));
    root.append(C.heading('Users'), error, shown,
                table('Users', [{ label: 'Email', key: 'email' }, { label: 'Role', key: 'role' },
                                { label: 'Tenant', value: tenant },
                                { label: 'Created', value: (u) => u.createdAt.slice(0, 10) },
                                { label: 'Password', value: (u) => (u.id === C.state.user.id ? el('a', { href: '#/account', text: 'Account' }) : reset(u)) },
                                { label: '', value: remove }], users),
                userForm(publishers, communities), roleForm(users, publishers, communities));
  });

  // Approve, or reject with a reason, one item of the queue: PATCH `path`. Each card's reason
  // field has its own id (`idPrefix`), so an error shows under the card it belongs to.
  function decisionForm(path, what, idPrefix) {
    const reason = input({});
    const form = el('form', { class: 'inline-form', novalidate: true },
                    field('reviewReason', 'Reason for rejecting', reason, null, idPrefix), C.formError(),
                    el('button', { type: 'button', text: 'Approve', 'aria-label': 'Approve ' + what,
                                   onclick: () => decide({ reviewStatus: 'approved' }) }),
                    el('button', { type: 'submit', class: 'danger', text: 'Reject', 'aria-label': 'Reject ' + what }));
    async function decide(body) {
      await C.busy(form, async () => {
        const res = await api('PATCH', path, body);
        if (res.status !== 200) return C.showErrors(form, res);
        C.rerender();
      });
    }
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      decide({ reviewStatus: 'rejected', reviewReason: reason.value.trim() });
    });
    return form;
  }

  function reviewCard(ad, campaign, communityName) {
    return el('article', { class: 'card review-card', 'data-ad': String(ad.id) },
      el('h3', { text: ad.headline }),
      el('p', { class: 'muted' }, 'Campaign ', campaign ? el('a', { href: '#/campaigns/' + campaign.id, text: campaign.name }) : '#' + ad.campaignId,
         ' · ' + communityName + ' · click-through ', el('code', { text: ad.ctaUrl })),
      C.preview(ad, communityName), decisionForm('/admin/v1/ads/' + ad.id, ad.headline, 'ad-' + ad.id + '-'));
  }

  // A community's brand change (issue 39): served ads keep the approved name and logo until an
  // operator approves the new ones.
  function brandCard(community) {
    const was = community.approved || { name: '(none approved)', logoUrl: '' };
    return el('article', { class: 'card review-card', 'data-community': String(community.id) },
      el('h3', { text: 'Community brand: ' + community.name }),
      table('Brand change of ' + community.name, [
        { label: 'Field', key: 'field' },
        { label: 'Serving now', value: (r) => el('code', { text: r.was }) },
        { label: 'Requested', value: (r) => el('code', { text: r.now }) }],
        [{ field: 'Name', was: was.name, now: community.name },
         { field: 'Logo URL', was: was.logoUrl, now: community.logoUrl }]),
      decisionForm('/admin/v1/communities/' + community.id, 'brand of ' + community.name,
                   'community-' + community.id + '-'));
  }

  C.route('/review', ['operator'], async (root) => {
    const [{ ads }, { campaigns }, { communities }] = await Promise.all([
      load('/admin/v1/ads?reviewStatus=pending'), load('/admin/v1/campaigns?archived=any'), load('/admin/v1/communities')]);
    const campaignsById = new Map(campaigns.map((c) => [c.id, c]));
    // Ads are previewed with the brand they are served with: the community's approved one.
    const names = new Map(communities.map((c) => [c.id, c.approved ? c.approved.name : c.name]));
    const brands = communities.filter((c) => c.reviewStatus === 'pending');
    const waiting = ads.length + brands.length;
    root.append(C.heading('Creative review'),
                C.notice(waiting ? waiting + ' item(s) wait for review: ' + ads.length + ' ad(s), ' + brands.length +
                                   ' community brand(s). Only approved ads and brands are served.'
                                 : 'Nothing waits for review.'));
    for (const community of brands) root.append(brandCard(community));
    for (const ad of ads) {
      const campaign = campaignsById.get(ad.campaignId);
      root.append(reviewCard(ad, campaign, campaign ? names.get(campaign.communityId) || '' : ''));
    }
  });

  async function probe(path) {
    try {
      const res = await fetch(path, { headers: { Accept: 'application/json' } });
      const text = await res.text();
      let json = null;
      try { json = JSON.parse(text); } catch (e) { json = null; }
      return { status: res.status, json };
    } catch (e) {
      return { status: 0, json: null };
    }
  }

  C.route('/health', ['operator'], async (root) => {
    const [live, ready] = await Promise.all([probe('/healthz'), probe('/readyz')]);
    const to = new Date(Math.floor(Date.now() / 60000) * 60000 + 60000);
    const from = new Date(to.getTime() - 30 * 60000);
    const minutes = await load('/admin/v1/reports?' + C.query({ granularity: 'minute', from: from.toISOString(), to: to.toISOString() }));
    const r = ready.json || {};
    const facts = [
      ['Live (/healthz)', live.status === 200 ? 'ok' : 'HTTP ' + live.status],
      ['Ready (/readyz)', ready.status === 200 ? r.status : 'not ready (HTTP ' + ready.status + ')'],
      ['Wallet table', r.walletTable === undefined ? 'unknown' : r.walletTable +
        (r.walletTableInMemory === undefined ? '' : r.walletTableInMemory ? ', in memory' : ', on disk')],
    ];
    if (!r.indexer || !r.indexer.length) facts.push(['Indexer', 'off (no [indexer] configured)']);
    for (const chain of r.indexer || []) {
      facts.push(['Indexer, chain ' + chain.chainId, 'head ' + fmt(chain.head) + ', next block ' +
                  fmt(chain.nextBlock) + ', lag ' + fmt(chain.lag) + ' blocks']);
    }
    // Issue 38 item 6: a live page says when it was read, and reads again on request.
    const updated = new Date();
    root.append(C.heading('Health'),
                el('p', { class: 'muted', id: 'updated-at' }, 'Updated at ' + updated.toISOString().slice(11, 19) + ' UTC ',
                   el('button', { type: 'button', class: 'secondary', text: 'Refresh', onclick: () => C.rerender() })),
                el('div', { class: 'table-box', tabindex: '0', role: 'region', 'aria-labelledby': 'health-caption' },
                   el('table', { id: 'health-table' }, el('caption', { id: 'health-caption', text: 'Server state' }),
                      el('tbody', {}, facts.map(([k, v]) => el('tr', {}, el('th', { scope: 'row', text: k }), el('td', { text: v })))))));
    const byMinute = new Map((minutes.rows || []).map((row) => [row.time, row]));
    const series = [];
    for (let t = from.getTime(); t < to.getTime(); t += 60000) {
      const key = new Date(t).toISOString().replace('.000Z', 'Z');
      const row = byMinute.get(key) || {};
      series.push({ minute: key.slice(11, 16), perSecond: (row.requests || 0) / 60, requests: row.requests || 0,
                    impressions: row.impressions || 0, clicks: row.clicks || 0 });
    }
    report(root, 'Ad requests per second (last 30 minutes)',
           { labels: series.map((s) => s.minute), yTitle: 'Requests / s',
             datasets: [{ label: 'Requests per second', data: series.map((s) => Number(s.perSecond.toFixed(3))) }] },
           table('Per minute (UTC)', [
             { label: 'Minute', key: 'minute' },
             { label: 'Requests', value: (s) => fmt(s.requests), numeric: true },
             { label: 'Per second', value: (s) => s.perSecond.toFixed(2), numeric: true },
             { label: 'Impressions', value: (s) => fmt(s.impressions), numeric: true },
             { label: 'Clicks', value: (s) => fmt(s.clicks), numeric: true },
           ], series.slice().reverse()));
    root.append(C.notice('Per-second figures are per-minute rollups divided by 60 (flushed every ' +
                         'events.flush_interval_ms). The indexer lag counts the blocks behind the ' +
                         "node's head, confirmations included."));
  });
})(window.AdConsole);
