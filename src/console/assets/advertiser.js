// adserver console: advertiser pages. `#/campaigns` (list; operators pick a community),
// `#/campaigns/new`, `#/campaigns/ID` (status, pause/resume, budget and pacing status, charts,
// ads with their review status, conversions with tx hashes, the edit form),
// `#/campaigns/ID/ads/new` and `#/ads/ID` (the ad form with the live preview in four formats),
// `#/communities/ID/keys` (advertiser keys for POST /v1/events).
// An advertiser user reaches only its community's campaigns (the API answers 404 otherwise).
'use strict';

(function (C) {
  const { el, api, load, field, input, select, fmt, money, table, report } = C;

  async function communities() {
    return (await load('/admin/v1/communities')).communities;
  }

  // `?archived=true`: the archived campaigns instead of the current ones (issue 38 item 3).
  C.route('/campaigns', ['operator', 'advertiser'], async (root) => {
    const params = C.hashParams();
    const archived = params.get('archived') === 'true';
    const [{ campaigns }, all] = await Promise.all([load('/admin/v1/campaigns' + (archived ? '?archived=true' : '')), communities()]);
    const names = new Map(all.map((c) => [c.id, c.name]));
    const chosen = Number(params.get('community')) || 0;
    const shown = chosen ? campaigns.filter((c) => c.communityId === chosen) : campaigns;
    const listOf = (community, archivedToo) => {
      const q = new URLSearchParams();
      if (community) q.set('community', community);
      if (archivedToo) q.set('archived', 'true');
      return '#/campaigns' + (q.toString() ? '?' + q : '');
    };
    root.append(C.heading(archived ? 'Archived campaigns' : 'Campaigns'),
                el('p', { class: 'actions' },
                   archived ? null : el('a', { class: 'button', href: '#/campaigns/new', text: 'New campaign' }),
                   el('a', { id: 'archived-toggle', href: listOf(chosen, !archived),
                             text: archived ? 'Back to the current campaigns' : 'Show archived campaigns' })));
    if (C.isOperator()) {
      const picker = select([[0, 'All communities'], ...all.map((c) => [c.id, c.name])], chosen,
                            { id: 'tenant-picker' });
      picker.addEventListener('change', () => { location.hash = listOf(Number(picker.value), archived); });
      root.append(el('div', { class: 'field inline' }, el('label', { for: 'tenant-picker', text: 'Community' }), picker));
      if (chosen) root.append(el('p', {}, el('a', { href: '#/communities/' + chosen + '/keys', text: 'Advertiser keys of this community' })));
    }
    root.append(table('Campaigns', [
      { label: 'Name', value: (c) => el('a', { href: '#/campaigns/' + c.id, text: c.name }) },
      { label: 'Community', value: (c) => names.get(c.communityId) || String(c.communityId) },
      { label: 'Status', key: 'status' },
      { label: 'Pricing', value: (c) => c.pricing.model + ' ' + money(c.pricing.bid) },
      { label: 'Budget', value: (c) => budgetText(c.budget) },
      { label: 'Pacing', key: 'pacing' },
    ], shown));
  });

  function budgetText(budget) {
    if (!budget || (budget.total === null && budget.daily === null)) return 'none';
    const parts = [];
    if (budget.total !== null) parts.push('total ' + money(budget.total));
    if (budget.daily !== null) parts.push('daily ' + money(budget.daily));
    return parts.join(', ');
  }

  // A search of the project registry on the server (name, slug or contract address: GET
  // /admin/v1/projects?q=, a page of the best matches; issue 38 item 5, so no page downloads the
  // whole registry) with the chosen projects as removable chips. `filter` narrows the search
  // (e.g. {ownerCommunityId}). get() answers the chosen slugs.
  function projectPicker(name, label, chosenSlugs, hint, filter) {
    const chosen = new Set(chosenSlugs || []);
    const names = new Map();  // slug -> name, of the projects the searches showed
    const search = input({ type: 'search', autocomplete: 'off', placeholder: 'Search by name, slug or 0x address' });
    const chips = el('ul', { class: 'chips', 'aria-label': label + ': chosen' });
    const results = el('ul', { class: 'results', 'aria-label': label + ': matches', 'aria-live': 'polite' });
    const drawChips = () => {
      chips.replaceChildren(...[...chosen].map((slug) => el('li', {},
        (names.get(slug) || slug) + ' (' + slug + ') ',
        el('button', { type: 'button', class: 'chip-remove', text: '×', 'aria-label': 'Remove ' + slug,
                       onclick: () => { chosen.delete(slug); drawChips(); search.focus(); } }))));
    };
    let asked = 0;  // the latest search: an older answer arriving later is dropped
    let timer = null;
    const drawResults = async () => {
      const q = search.value.trim();
      const mine = ++asked;
      if (!q) { results.replaceChildren(); return; }
      let page;
      try {
        page = await load('/admin/v1/projects?' + C.query({ q, limit: 8, fields: 'summary', ...(filter || {}) }));
      } catch (e) {
        if (mine === asked) results.replaceChildren(el('li', { class: 'error', text: e.message }));
        return;
      }
      if (mine !== asked) return;
      results.replaceChildren();
      const hits = page.projects.filter((p) => !chosen.has(p.slug));
      if (!hits.length) results.append(el('li', { class: 'muted', text: 'No project matches.' }));
      for (const p of hits) {
        names.set(p.slug, p.name);
        results.append(el('li', {}, el('button', {
          type: 'button', class: 'secondary', text: 'Add ' + p.name + ' (' + p.slug + ')',
          onclick: () => { chosen.add(p.slug); search.value = ''; drawResults(); drawChips(); search.focus(); },
        })));
      }
      if (page.total > page.projects.length) {
        results.append(el('li', { class: 'muted', text: (page.total - page.projects.length) + ' more: type more of the name.' }));
      }
    };
    search.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(drawResults, 150); });
    drawChips();
    const node = field(name, label, search, hint);
    node.append(chips, results);
    return { node, get: () => [...chosen] };
  }

  const dateOf = (ts) => (ts ? String(ts).slice(0, 10) : '');
  const orNull = (v) => (v.trim() === '' ? null : v.trim());
  const intOrNull = (v) => (v.trim() === '' ? null : Number(v));
  const ids = (text) => text.split(',').map((s) => s.trim()).filter(Boolean).map(Number);

  // The campaign form: create (campaign null) or edit. Money goes as decimal strings, so the
  // API validates it (and its errors land at the field).
  function campaignForm(campaign, allCommunities, onSaved) {
    const c = campaign || { status: 'draft', pricing: { model: 'CPM' }, budget: {}, targeting: {}, pacing: 'even' };
    const t = c.targeting || {};
    const conv = c.conversion || {};
    const f = {
      name: input({ value: c.name || '' }),
      status: select(['draft', 'active', 'paused', 'ended'], c.status),
      model: select(['CPM', 'CPC', 'CPA'], c.pricing.model),
      bid: input({ inputmode: 'decimal', value: c.pricing.bid ?? '' }),
      total: input({ inputmode: 'decimal', value: (c.budget && c.budget.total) ?? '' }),
      daily: input({ inputmode: 'decimal', value: (c.budget && c.budget.daily) ?? '' }),
      pacing: select([['even', 'even (spread over the day or flight)'], ['asap', 'asap']], c.pacing),
      startsAt: input({ type: 'date', value: dateOf(c.startsAt) }),
      endsAt: input({ type: 'date', value: dateOf(c.endsAt) }),
      chains: input({ value: (t.chains || []).join(', ') }),
      recency: input({ inputmode: 'numeric', value: t.recencyDays ?? '' }),
      capCount: input({ inputmode: 'numeric', value: c.frequencyCap ? c.frequencyCap.count : '' }),
      capHours: input({ inputmode: 'numeric', value: c.frequencyCap ? c.frequencyCap.hours : '' }),
      category: input({ value: c.category || '' }),
      kind: select(['any', 'new', 'returning'], conv.kind || 'any'),
      windowDays: input({ inputmode: 'numeric', value: conv.windowDays ?? '' }),
      returningAfter: input({ inputmode: 'numeric', value: conv.returningAfterDays ?? '' }),
      once: el('input', { type: 'checkbox', checked: conv.countOncePerPerson !== false }),
    };
    const community = C.isOperator() && !campaign
      ? field('communityId', 'Community', select(allCommunities.map((x) => [x.id, x.name]), c.communityId)) : null;
    const targets = projectPicker('targeting.projects', 'Target users of projects', t.projects,
                                  'People whose wallets used one of these projects see the campaign.');
    const excludes = projectPicker('targeting.excludeProjects', 'Exclude users of projects', t.excludeProjects);
    // Issue 39: conversions count only on projects verified as the campaign's community's own, so
    // only those are offered (and any already chosen, to be removed); an operator creating a
    // campaign picks the community below, so it sees every project.
    const owner = campaign ? campaign.communityId : (C.isOperator() ? null : C.state.user.communityId);
    const convProjects = projectPicker('conversion.projects', 'Conversion projects', conv.projects,
                                       'Onchain transactions with these projects count as conversions (required for CPA). ' +
                                       "Only projects an operator verified as the community's own can be chosen; ask for yours " +
                                       'with POST /admin/v1/projects/{slug}/ownership-requests.',
                                       owner == null ? null : { ownerCommunityId: owner });
    const form = el('form', { class: 'card form', 'aria-labelledby': 'campaign-form-title', novalidate: true },
      el('h3', { id: 'campaign-form-title', text: campaign ? 'Edit campaign' : 'New campaign' }),
      community,
      field('name', 'Name', f.name),
      field('status', 'Status', f.status),
      el('fieldset', {}, el('legend', { text: 'Pricing and budget' }),
         field('pricing.model', 'Pricing model', f.model),
         field('pricing.bid', 'Bid', f.bid, 'In ' + C.state.currency + ', per 1000 impressions (CPM), per click (CPC) or per conversion (CPA).'),
         field('budget.total', 'Total budget', f.total, 'In ' + C.state.currency + '; empty = no limit.'),
         field('budget.daily', 'Daily budget', f.daily, 'In ' + C.state.currency + ', per UTC day; empty = no limit.'),
         field('pacing', 'Pacing', f.pacing),
         field('startsAt', 'Starts (UTC)', f.startsAt),
         field('endsAt', 'Ends (UTC)', f.endsAt)),
      el('fieldset', {}, el('legend', { text: 'Targeting' }),
         targets.node, excludes.node,
         field('targeting.chains', 'Chains', f.chains, 'Chain ids, comma-separated; empty = any chain.'),
         field('targeting.recencyDays', 'Active within (days)', f.recency),
         field('frequencyCap.count', 'Frequency cap: ads', f.capCount),
         field('frequencyCap.hours', 'Frequency cap: per hours', f.capHours),
         field('category', 'Category', f.category, 'e.g. gambling; served only where publishers accept it.')),
      el('fieldset', {}, el('legend', { text: 'Conversions' }),
         convProjects.node,
         field('conversion.kind', 'Who counts', f.kind),
         field('conversion.windowDays', 'Window (days after the click or view)', f.windowDays),
         field('conversion.returningAfterDays', 'Returning after (days)', f.returningAfter),
         el('div', { class: 'field' }, el('label', { class: 'check' }, f.once, ' Count once per person'))),
      C.formError(),
      el('button', { type: 'submit', text: campaign ? 'Save campaign' : 'Create campaign' }));

    const body = () => {
      const b = {
        name: f.name.value.trim(), status: f.status.value,
        pricing: { model: f.model.value, bid: f.bid.value.trim() },
        pacing: f.pacing.value,
        startsAt: f.startsAt.value ? f.startsAt.value + 'T00:00:00Z' : null,
        endsAt: f.endsAt.value ? f.endsAt.value + 'T00:00:00Z' : null,
        targeting: { projects: targets.get(), excludeProjects: excludes.get(), chains: ids(f.chains.value),
                     recencyDays: intOrNull(f.recency.value) },
        category: orNull(f.category.value),
      };
      const total = orNull(f.total.value);
      const daily = orNull(f.daily.value);
      if (total !== null || daily !== null) b.budget = { total, daily };
      else if (campaign) b.budget = null;
      if (f.capCount.value.trim() || f.capHours.value.trim()) {
        b.frequencyCap = { count: intOrNull(f.capCount.value), hours: intOrNull(f.capHours.value) };
      } else if (campaign) b.frequencyCap = null;
      if (convProjects.get().length || f.model.value === 'CPA') {
        b.conversion = { projects: convProjects.get(), kind: f.kind.value, countOncePerPerson: f.once.checked };
        if (f.windowDays.value.trim()) b.conversion.windowDays = Number(f.windowDays.value);
        if (f.returningAfter.value.trim()) b.conversion.returningAfterDays = Number(f.returningAfter.value);
      } else if (campaign) b.conversion = null;
      if (!campaign) {
        b.communityId = C.isOperator() ? Number(community.querySelector('select').value) : C.state.user.communityId;
      }
      return b;
    };
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      C.busy(form, async () => {
        const res = campaign ? await api('PATCH', '/admin/v1/campaigns/' + campaign.id, body())
                             : await api('POST', '/admin/v1/campaigns', body());
        if (res.status !== 200 && res.status !== 201) return C.showErrors(form, res);
        onSaved(res.json);
      });
    });
    return form;
  }

  // Issue 38 item 3: the operator's communities (advertisers): the list and a new one.
  C.route('/communities', ['operator'], async (root) => {
    const all = await communities();
    const f = { name: input({}), logoUrl: input({ type: 'url', placeholder: 'https://' }) };
    const form = el('form', { class: 'card form', novalidate: true, 'aria-labelledby': 'community-form-title' },
      el('h3', { id: 'community-form-title', text: 'New community' }),
      field('name', 'Name', f.name, 'The advertiser\'s name, shown with its ads.'),
      field('logoUrl', 'Logo URL', f.logoUrl, 'https; shown with its ads.'),
      C.formError(), el('button', { type: 'submit', text: 'Create community' }));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      C.busy(form, async () => {
        const res = await api('POST', '/admin/v1/communities', { name: f.name.value.trim(), logoUrl: f.logoUrl.value.trim() });
        if (res.status !== 201) return C.showErrors(form, res);
        C.rerender();
      });
    });
    // Edit one (the operator's writes approve the brand at once, issue 39).
    const chosen = select(all.map((c) => [c.id, c.name + ' (#' + c.id + ')']));
    const e = { name: input({}), logoUrl: input({ type: 'url', placeholder: 'https://' }) };
    const fill = () => {
      const c = all.find((x) => String(x.id) === chosen.value);
      e.name.value = c ? c.name : '';
      e.logoUrl.value = c ? c.logoUrl : '';
    };
    chosen.addEventListener('change', fill);
    fill();
    const saved = el('p', { class: 'ok', role: 'status' });
    const edit = el('form', { class: 'card form', novalidate: true, 'aria-labelledby': 'community-edit-title' },
      el('h3', { id: 'community-edit-title', text: 'Edit a community' }),
      field('community', 'Community', chosen, null, 'edit-'),
      field('name', 'Name', e.name, null, 'edit-'), field('logoUrl', 'Logo URL', e.logoUrl, 'https; shown with its ads.', 'edit-'),
      C.formError(), saved, el('button', { type: 'submit', text: 'Save community' }));
    edit.addEventListener('submit', (event) => {
      event.preventDefault();
      saved.textContent = '';
      C.busy(edit, async () => {
        const res = await api('PATCH', '/admin/v1/communities/' + chosen.value, { name: e.name.value.trim(), logoUrl: e.logoUrl.value.trim() });
        if (res.status !== 200) return C.showErrors(edit, res);
        await C.rerender();
        const again = document.querySelector('#f-edit-community');
        if (again) { again.value = String(res.json.id); again.dispatchEvent(new Event('change')); }
        const status = document.querySelector('#page-view form[aria-labelledby="community-edit-title"] .ok');
        if (status) status.textContent = 'Saved.';
      });
    });
    root.append(C.heading('Communities'),
                table('Communities', [
                  { label: 'Name', key: 'name' },
                  { label: 'Id', key: 'id', numeric: true },
                  { label: 'Logo', value: (c) => el('code', { class: 'hash', title: c.logoUrl, text: c.logoUrl }) },
                  { label: 'Campaigns', value: (c) => el('a', { href: '#/campaigns?community=' + c.id, text: 'Campaigns', 'aria-label': 'Campaigns of ' + c.name }) },
                  { label: 'Keys', value: (c) => el('a', { href: '#/communities/' + c.id + '/keys', text: 'Advertiser keys', 'aria-label': 'Advertiser keys of ' + c.name }) },
                ], all),
                form, all.length ? edit : null);
  });

  // Advertiser keys (POST /v1/events) of a community.
  C.route('/communities/:id/keys', ['operator', 'advertiser'], async (root, { id }) => {
    const community = await load('/admin/v1/communities/' + id);
    root.append(C.heading(community.name + ': advertiser keys'),
                await C.keysSection('/admin/v1/communities/' + id + '/keys',
                                    'Keys for POST /v1/events (your site reports sign-ups and purchases).'));
  });

  C.route('/campaigns/new', ['operator', 'advertiser'], async (root) => {
    const all = await communities();
    root.append(C.heading('New campaign'),
                campaignForm(null, all, (saved) => { location.hash = '#/campaigns/' + saved.id; }));
  });

  // Budget and pacing: total spend (stats, since creation) and today's spend (daily report).
  function budgetStatus(campaign, stats, today) {
    const b = campaign.budget || {};
    const bar = (spent, limit, label) => el('div', { class: 'budget' },
      el('span', { text: label + ': ' + money(spent) + (limit !== null && limit !== undefined ? ' of ' + money(limit) : ' (no limit)') }),
      limit ? el('progress', { max: String(limit), value: String(Math.min(spent, limit)), 'aria-label': label }) : null);
    const exhausted = (b.total && stats.spend >= b.total) || (b.daily && today >= b.daily);
    return el('section', { class: 'card', 'aria-labelledby': 'budget-title' },
      el('h3', { id: 'budget-title', text: 'Budget and pacing' }),
      bar(stats.spend, b.total, 'Total spend'), bar(today, b.daily, 'Spend today (UTC)'),
      el('p', { text: 'Pacing: ' + campaign.pacing + ' · status: ' + campaign.status +
                      (exhausted ? ' · budget spent: not serving' : '') }),
      el('p', { class: 'muted', text: 'Since creation: ' + fmt(stats.impressions) + ' impressions, ' + fmt(stats.clicks) +
                ' clicks, ' + fmt(stats.conversions) + ' conversions' +
                (stats.overBudgetConversions ? ' (and ' + fmt(stats.overBudgetConversions) + ' past the total budget, not billed)' : '') +
                ', CTR ' + C.percent(stats.ctr) + '.' }));
  }

  function adsCard(campaignId, ads) {
    return el('section', { class: 'card', 'aria-labelledby': 'ads-title' },
      el('h3', { id: 'ads-title', text: 'Ads' }),
      el('p', {}, el('a', { class: 'button', href: '#/campaigns/' + campaignId + '/ads/new', text: 'New ad' })),
      table('Ads of this campaign', [
        { label: 'Headline', value: (a) => el('a', { href: '#/ads/' + a.id, text: a.headline }) },
        { label: 'Status', value: (a) => (a.archived ? 'archived (' + a.status + ')' : a.status) },
        { label: 'Review', value: (a) => el('span', { class: 'review review-' + a.reviewStatus, text: a.reviewStatus }) },
        { label: 'Reason', value: (a) => a.reviewReason || '' },
        { label: 'A/B arm', value: (a) => a.abArm || '' },
        { label: 'Weight', key: 'weight', numeric: true },
      ], ads));
  }

  // Issue 38 item 6: newest block first (the API lists by id, which a late import or a reorg's
  // replay puts out of block order), each hash shortened with the whole in its title and a link
  // to the chain's explorer where one is known.
  function conversionsTable(conversions) {
    const sorted = [...conversions].sort((a, b) => String(b.blockTime).localeCompare(String(a.blockTime)) || b.id - a.id);
    return table('Conversions (newest block first)', [
      { label: 'Block time', value: (v) => String(v.blockTime).replace('T', ' ').replace('Z', '') },
      { label: 'Status', key: 'status' },
      { label: 'Chain', value: (v) => C.chainName(v.chainId) },
      { label: 'Tx hash', value: (v) => C.txLink(v.chainId, v.txHash) },
      { label: 'Touch', key: 'touch' },
      // Issue 37: a conversion past the total budget (over_budget) or reorged is not billed.
      { label: 'Price', value: (v) => v.billed ? money(v.price) : money(0) + ' (not billed)', numeric: true },
    ], conversions);
  }

  // The campaign's report over the URL's period (C.period; issue 38 item 1), per day or hour.
  async function campaignReport(root, id, period) {
    const params = { campaignId: id, granularity: period.granularity, from: period.from, to: period.to };
    const data = await load('/admin/v1/reports?' + C.query(params));
    const byBucket = new Map((data.rows || []).map((r) => [period.keyOf(r), r]));
    const series = period.buckets.map((b) => Object.assign({ impressions: 0, clicks: 0, conversions: 0, spend: 0 },
                                                           byBucket.get(b) || {},
                                                           { day: b.replace('T', ' ') + (b.length > 10 ? ':00' : '') }));
    const pick = (k) => series.map((s) => s[k] || 0);
    report(root, period.title,
           // Issue 38 item 6: one series per axis, each with its unit: reach and its cost in one
           // chart, what it earned the advertiser in the other.
           [{ labels: period.buckets.map(period.label), title: 'Impressions and spend',
              yTitle: 'Impressions (count)', y1Title: 'Spend (' + C.state.currency + ')',
              datasets: [{ label: 'Impressions', data: pick('impressions') },
                         { label: 'Spend', data: pick('spend'), axis: 'y1' }] },
            { labels: period.buckets.map(period.label), title: 'Clicks and conversions', colorOffset: 2,
              yTitle: 'Clicks (count)', y1Title: 'Conversions (count)',
              datasets: [{ label: 'Clicks', data: pick('clicks') },
                         { label: 'Conversions', data: pick('conversions'), axis: 'y1' }] }],
           table((period.granularity === 'hour' ? 'Per hour' : 'Per day') + ' (UTC)', [
             { label: period.bucketName, key: 'day' },
             { label: 'Impressions', value: (s) => fmt(s.impressions), numeric: true },
             { label: 'Clicks', value: (s) => fmt(s.clicks), numeric: true },
             { label: 'Conversions', value: (s) => fmt(s.conversions), numeric: true },
             { label: 'Spend', value: (s) => money(s.spend), numeric: true },
           ], series, Object.assign({ day: 'Total' }, data.totals)),
           C.csvLink('/admin/v1/reports', params, 'campaign-' + id + '-' + period.from + '-' + period.last));
  }

  // The engine's belief about a CPC/CPA campaign's rate (issue 36): mean and 95 % interval.
  function estimateText(e) {
    const pct = (x) => (x * 100).toFixed(2) + ' %';
    return 'Estimated ' + e.rate.toUpperCase() + ': ' + pct(e.mean) + ' (95 % interval ' + pct(e.low) + '–' +
           pct(e.high) + '), from ' + Math.round(e.events) + (e.rate === 'ctr' ? ' clicks' : ' conversions') +
           ' in ' + Math.round(e.impressions) + ' impressions as the engine weighs them';
  }

  // Open to every role: the API decides (another tenant's campaign → 404 → "Not found").
  C.route('/campaigns/:id', ['operator', 'advertiser', 'publisher'], async (root, { id }) => {
    const campaign = await load('/admin/v1/campaigns/' + id);
    const todayRange = C.lastDays(1);
    // The URL's period covers the reports and the conversions list alike (issue 38 item 1).
    const period = C.period('14');
    const [stats, { ads }, { conversions }, all, spentToday] = await Promise.all([
      load('/admin/v1/campaigns/' + id + '/stats'), load('/admin/v1/ads?archived=any&campaignId=' + id),
      load('/admin/v1/conversions?' + C.query({ campaignId: id, from: period.from, to: period.to, limit: 50 })), communities(),
      load('/admin/v1/reports?' + C.query({ campaignId: id, granularity: 'total', from: todayRange.from, to: todayRange.to }))]);
    const community = all.find((x) => x.id === campaign.communityId);
    const status = el('p', { class: 'error', role: 'alert' });
    const paused = campaign.status === 'paused';
    const toggle = el('button', { type: 'button', text: paused ? 'Resume' : 'Pause', onclick: async () => {
      const res = await api('PATCH', '/admin/v1/campaigns/' + id, { status: paused ? 'active' : 'paused' });
      if (res.status !== 200) { status.textContent = C.errorText(res); return; }
      C.rerender();
    } });
    root.append(C.heading(campaign.name),
                el('p', { class: 'muted', text: (community ? community.name + ' · ' : '') + campaign.pricing.model + ' ' +
                          money(campaign.pricing.bid) + ' · targets ' + campaign.targeting.projects.join(', ') }),
                stats.estimate ? el('p', { id: 'rate-estimate', class: 'muted', text: estimateText(stats.estimate) }) : null,
                el('div', { class: 'actions' }, el('span', { class: 'status-' + campaign.status, text: 'Status: ' + campaign.status }),
                   campaign.status === 'active' || paused ? toggle : null),
                // Issue 38 item 4: an active campaign without an approved, active ad serves nothing.
                archivedNotice(campaign, 'campaign'),
                campaign.status === 'active' && !campaign.archived &&
                !ads.some((a) => a.reviewStatus === 'approved' && a.status === 'active' && !a.archived)
                  ? el('p', { class: 'warning', id: 'no-approved-ad', role: 'status',
                              text: 'This campaign is active but has no approved, active ad: it is not served until one is approved.' })
                  : null,
                status);
    root.append(C.periodControl(period));
    await campaignReport(root, id, period);
    const ab = await load('/admin/v1/reports/ab?' + C.query({ campaignId: id, from: period.from, to: period.to }));
    root.append(el('section', { class: 'report-block' }, el('h3', { text: 'A/B comparison of arms, ' + period.title.toLowerCase() }),
                   C.abTable(ab, 'Arm', 'A/B comparison of the ads\' arms')));
    const deleteError = el('p', { class: 'error', role: 'alert' });
    root.append(budgetStatus(campaign, stats, (spentToday.totals && spentToday.totals.spend) || 0), adsCard(id, ads),
                el('section', { class: 'card', 'aria-labelledby': 'conv-title' },
                   el('h3', { id: 'conv-title', text: 'Conversions, ' + period.title.toLowerCase() + ' (UTC, the latest 50)' }),
                   conversionsTable(conversions)),
                campaignForm(campaign, all, () => C.rerender()),
                el('div', { class: 'actions' }, archiveButton('campaign', campaign, campaign.name, deleteError),
                   deleteButton('campaign', id, campaign.name,
                  'Delete this campaign and its ads? It stops serving at once; its billed events and the reports stay.',
                  '#/campaigns', deleteError)), deleteError);
  });

  // The ad form with its live preview; `ad` null creates one in `campaign`.
  function adForm(ad, campaign, communityName) {
    const a = ad || { headline: '', content: '', ctaUrl: '', ctaLabel: '', images: {}, status: 'active', weight: 1, abArm: null };
    const img = a.images || {};
    const f = {
      headline: input({ value: a.headline, maxlength: '100' }),
      content: el('textarea', { rows: 4, value: a.content }),
      ctaUrl: input({ type: 'url', value: a.ctaUrl, placeholder: 'https://' }),
      ctaLabel: input({ value: a.ctaLabel, maxlength: '25' }),
      LANDSCAPE: input({ type: 'url', value: img.LANDSCAPE || '' }),
      LONG_BANNER: input({ type: 'url', value: img.LONG_BANNER || '' }),
      SHORT_BANNER: input({ type: 'url', value: img.SHORT_BANNER || '' }),
      status: select(['active', 'paused'], a.status),
      // Issue 38 item 4: the A/B arm the ad belongs to and its share of the campaign's serves.
      abArm: input({ value: a.abArm || '', maxlength: '32', placeholder: 'e.g. A' }),
      weight: input({ type: 'number', min: '1', max: '10000', step: '1', value: String(a.weight || 1) }),
    };
    // Issue 38 bug 2: a line break typed in the textarea (Enter) is the spec's two characters
    // \n (section 2.5), so the preview and the API see the same markup (the API refuses raw ones).
    const current = () => ({
      headline: f.headline.value, content: f.content.value.replace(/\r\n|\r|\n/g, '\\n'), ctaUrl: f.ctaUrl.value.trim(), ctaLabel: f.ctaLabel.value,
      images: { LANDSCAPE: orNull(f.LANDSCAPE.value), LONG_BANNER: orNull(f.LONG_BANNER.value), SHORT_BANNER: orNull(f.SHORT_BANNER.value) },
      status: f.status.value,
      abArm: orNull(f.abArm.value.trim()),
      weight: Number(f.weight.value),
    });
    const previewSlot = el('div', { id: 'ad-preview' });
    const drawPreview = () => previewSlot.replaceChildren(C.preview(current(), communityName));
    const review = ad ? el('p', { class: 'review review-' + ad.reviewStatus, role: 'status',
                                  text: 'Review: ' + ad.reviewStatus + (ad.reviewReason ? ' — ' + ad.reviewReason : '') +
                                        (C.isOperator() ? '' : ' (edits go back to review)') }) : null;
    const form = el('form', { class: 'card form', novalidate: true, 'aria-labelledby': 'ad-form-title' },
      el('h3', { id: 'ad-form-title', text: ad ? 'Edit ad' : 'New ad' }), review,
      field('headline', 'Headline', f.headline, 'Plain text, up to 100 characters.'),
      field('content', 'Content', f.content,
            'Up to 400 characters: **bold**, *italic*, __underline__, lines starting with "* " are bullets, Enter (or \\n) starts a new line.'),
      field('ctaUrl', 'Click-through URL', f.ctaUrl),
      field('ctaLabel', 'Button label', f.ctaLabel, 'Up to 25 characters.'),
      el('fieldset', {}, el('legend', { text: 'Images (https URLs; a format without an image is not served)' }),
         field('images.LANDSCAPE', 'LANDSCAPE 640 × 360', f.LANDSCAPE),
         field('images.LONG_BANNER', 'LONG_BANNER 1456 × 180', f.LONG_BANNER),
         field('images.SHORT_BANNER', 'SHORT_BANNER 640 × 200', f.SHORT_BANNER)),
      field('status', 'Status', f.status),
      el('fieldset', {}, el('legend', { text: 'A/B test' }),
         field('abArm', 'A/B arm', f.abArm, 'Ads of one arm are compared with the other arms\' in the campaign\'s A/B report; empty = no arm.'),
         field('weight', 'Weight', f.weight, 'The ad\'s share of the campaign\'s serves against its other ads\' weights (1 to 10000).')),
      C.formError(),
      el('button', { type: 'submit', text: ad ? 'Save ad' : 'Create ad' }));
    form.addEventListener('input', drawPreview);
    form.addEventListener('change', drawPreview);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      C.busy(form, async () => {
        const body = current();
        const res = ad ? await api('PATCH', '/admin/v1/ads/' + ad.id, body)
                       : await api('POST', '/admin/v1/ads', Object.assign({ campaignId: campaign.id }, body));
        if (res.status !== 200 && res.status !== 201) return C.showErrors(form, res);
        location.hash = '#/campaigns/' + campaign.id;
      });
    });
    drawPreview();
    return el('div', { class: 'ad-editor' }, form,
              el('section', { class: 'card', 'aria-labelledby': 'preview-title' },
                 el('h3', { id: 'preview-title', text: 'Preview' }), previewSlot));
  }

  async function communityName(campaign) {
    const found = (await communities()).find((x) => x.id === campaign.communityId);
    return found ? found.name : '';
  }

  C.route('/campaigns/:id/ads/new', ['operator', 'advertiser'], async (root, { id }) => {
    const campaign = await load('/admin/v1/campaigns/' + id);
    root.append(C.heading('New ad in ' + campaign.name), adForm(null, campaign, await communityName(campaign)));
  });

  C.route('/ads/:id', ['operator', 'advertiser', 'publisher'], async (root, { id }) => {
    const ad = await load('/admin/v1/ads/' + id);
    const campaign = await load('/admin/v1/campaigns/' + ad.campaignId);
    const error = el('p', { class: 'error', role: 'alert' });
    root.append(C.heading(ad.headline),
                el('p', {}, el('a', { href: '#/campaigns/' + campaign.id, text: 'Back to ' + campaign.name })),
                archivedNotice(ad, 'ad'),
                adForm(ad, campaign, await communityName(campaign)),
                el('div', { class: 'actions' }, archiveButton('ad', ad, ad.headline, error), deleteButton('ad', ad.id, ad.headline,
                  'Delete this ad? It stops serving at once; its billed clicks and conversions and the reports stay.',
                  '#/campaigns/' + campaign.id, error)), error);
  });

  // Issue 38 item 3: archiving a campaign or an ad stops it serving and takes it out of the
  // lists, keeping everything (restoring brings it back as it was); it asks first.
  function archiveButton(kind, record, name, error) {
    const write = async (archived) => {
      const res = await api('PATCH', '/admin/v1/' + kind + 's/' + record.id, { archived });
      if (res.status !== 200) { error.textContent = C.errorText(res); return; }
      C.rerender();
    };
    if (record.archived) {
      return el('button', { type: 'button', class: 'secondary', text: 'Restore ' + kind,
                            'aria-label': 'Restore ' + kind + ' ' + name, onclick: () => write(false) });
    }
    return C.confirmButton('Archive ' + kind, 'Archive ' + kind + ' ' + name,
      'Archive this ' + kind + '? It stops serving at once and leaves the ' + kind + ' list ("Show archived" finds it); ' +
      (kind === 'campaign' ? 'its ads, ' : 'its ') + 'billed events and reports stay, and restoring brings it back as it was.',
      () => write(true));
  }

  function archivedNotice(record, kind) {
    if (!record.archived) return null;
    return el('p', { class: 'warning', id: 'archived-notice', role: 'status',
                     text: 'Archived ' + String(record.archivedAt).replace('T', ' ').replace('Z', ' UTC') +
                           ': this ' + kind + ' is not served.' });
  }

  // Issue 38 item 3: deleting a campaign or an ad asks first and says what it does; the API
  // deletes the record, never the events already billed or their reports.
  function deleteButton(kind, id, name, question, then, error) {
    return C.confirmButton('Delete ' + kind, 'Delete ' + kind + ' ' + name, question, async () => {
      const res = await api('DELETE', '/admin/v1/' + kind + 's/' + id);
      if (res.status !== 200 && res.status !== 204) { error.textContent = C.errorText(res); return; }
      location.hash = then;
    });
  }

  // Every ad the caller may see (an advertiser's own; the operator's, of every community), the
  // review queue's ads among them.
  // `?archived=true`: the archived ads instead.
  C.route('/ads', ['operator', 'advertiser'], async (root) => {
    const archived = C.hashParams().get('archived') === 'true';
    const [{ ads }, { campaigns }] = await Promise.all([load('/admin/v1/ads' + (archived ? '?archived=true' : '')),
                                                       load('/admin/v1/campaigns?archived=any')]);
    const names = new Map(campaigns.map((c) => [c.id, c.name]));
    root.append(C.heading(archived ? 'Archived ads' : 'Ads'),
                el('p', {}, el('a', { id: 'archived-toggle', href: archived ? '#/ads' : '#/ads?archived=true',
                                      text: archived ? 'Back to the current ads' : 'Show archived ads' })),
                table(archived ? 'Archived ads' : 'Ads', [
                  { label: 'Headline', value: (a) => el('a', { href: '#/ads/' + a.id, text: a.headline }) },
                  { label: 'Campaign', value: (a) => el('a', { href: '#/campaigns/' + a.campaignId, text: names.get(a.campaignId) || '#' + a.campaignId }) },
                  { label: 'Status', key: 'status' },
                  { label: 'Review', value: (a) => el('span', { class: 'review review-' + a.reviewStatus, text: a.reviewStatus }) },
                  { label: 'A/B arm', value: (a) => a.abArm || '' },
                  { label: 'Weight', key: 'weight', numeric: true },
                ], ads));
  });
})(window.AdConsole);
