// adserver console: the project registry (issue 38 item 3), for operators. `#/projects` searches
// it server-side (GET /admin/v1/projects?q=&chainId=, a page at a time: the registry holds
// thousands of projects) and creates a project; `#/projects/ID` edits one (name, category, logo,
// owner community, contracts per chain picked by name) or deletes it. Advertisers find projects
// through the campaign form's picker (advertiser.js).
'use strict';

(function (C) {
  const { el, api, load, field, input, select, table } = C;
  const PAGE = 25;

  // The contracts editor: one row per contract, a chain picked by name (the server's named
  // chains; "Other" takes any chain id) and an address. Field names follow the API's errors
  // (`contracts[2].address`).
  function contractsEditor(contracts) {
    const rows = el('div', { class: 'contract-rows' });
    const named = C.chainOptions();
    let next = 0;
    const addRow = (contract) => {
      const i = next++;
      const known = contract && named.some(([id]) => id === Number(contract.chainId));
      const chain = select([...named, ['other', 'Other chain id…']],
                           contract ? (known ? contract.chainId : 'other') : (named.length ? named[0][0] : 'other'));
      const otherId = input({ type: 'number', min: '1', step: '1', inputmode: 'numeric',
                              value: contract && !known ? String(contract.chainId) : '' });
      const address = input({ value: contract ? contract.address : '', placeholder: '0x…', spellcheck: 'false',
                              autocomplete: 'off' });
      const otherField = field('contracts[' + i + '].chainId', 'Chain id', otherId, null, 'other-');
      const sync = () => { otherField.hidden = chain.value !== 'other'; };
      chain.addEventListener('change', sync);
      sync();
      const row = el('fieldset', { class: 'contract-row' },
        el('legend', { text: 'Contract' }),
        field('contracts[' + i + '].chain', 'Chain', chain), otherField,
        field('contracts[' + i + '].address', 'Address', address),
        el('button', { type: 'button', class: 'secondary', text: 'Remove',
                       'aria-label': 'Remove this contract', onclick: () => row.remove() }));
      row.value = () => ({ chainId: chain.value === 'other' ? Number(otherId.value) : Number(chain.value),
                           address: address.value.trim() });
      rows.append(row);
      return row;
    };
    for (const c of contracts || []) addRow(c);
    // Rows renumbered as sent, so an error on `contracts[1]` lands on the second row shown.
    const value = () => [...rows.children].map((row, i) => {
      for (const node of row.querySelectorAll('[data-field]')) {
        node.dataset.field = node.dataset.field.replace(/^contracts\[\d+\]/, 'contracts[' + i + ']');
      }
      return row.value();
    });
    const node = el('div', { class: 'field contracts', 'data-field': 'contracts' },
      el('p', { class: 'label', text: 'Contracts' }), rows,
      el('button', { type: 'button', class: 'secondary', text: 'Add a contract',
                     onclick: () => { addRow(null).querySelector('select').focus(); } }),
      el('p', { class: 'field-error', id: 'f-contracts-error', 'aria-live': 'polite' }));
    node.id = 'f-contracts';
    return { node, value };
  }

  // The project form: a new project (`project` null) or the edit of one.
  function projectForm(project, communities, onSaved) {
    const p = project || { slug: '', name: '', category: null, logoUrl: null, ownerCommunityId: null, contracts: [] };
    const f = {
      name: input({ value: p.name }),
      slug: input({ value: p.slug, spellcheck: 'false', autocapitalize: 'off' }),
      category: input({ value: p.category || '' }),
      logoUrl: input({ type: 'url', placeholder: 'https://', value: p.logoUrl || '' }),
      owner: select([['', 'Nobody (not verified)'], ...communities.map((c) => [c.id, c.name + ' (#' + c.id + ')'])],
                    p.ownerCommunityId ?? ''),
    };
    const contracts = contractsEditor(p.contracts);
    const done = el('p', { class: 'ok', role: 'status' });
    const form = el('form', { class: 'card form', novalidate: true, 'aria-labelledby': 'project-form-title' },
      el('h3', { id: 'project-form-title', text: project ? 'Edit project' : 'New project' }),
      field('name', 'Name', f.name),
      field('slug', 'Slug', f.slug, 'Lower-case letters, digits and dashes; campaigns target projects by it.'),
      field('category', 'Category', f.category, 'e.g. dex, lending, nft; empty = none.'),
      field('logoUrl', 'Logo URL', f.logoUrl, 'https; empty = none.'),
      field('ownerCommunityId', 'Owner community', f.owner,
            'The community verified as the project\'s own: only its campaigns may count conversions on it.'),
      contracts.node, C.formError(), done,
      el('button', { type: 'submit', text: project ? 'Save project' : 'Create project' }));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      done.textContent = '';
      C.busy(form, async () => {
        const text = (node) => (node.value.trim() === '' ? null : node.value.trim());
        const body = {
          name: f.name.value.trim(), slug: f.slug.value.trim(), category: text(f.category), logoUrl: text(f.logoUrl),
          ownerCommunityId: f.owner.value === '' ? null : Number(f.owner.value), contracts: contracts.value(),
        };
        const res = project ? await api('PATCH', '/admin/v1/projects/' + project.id, body)
                            : await api('POST', '/admin/v1/projects', body);
        if (res.status !== (project ? 200 : 201)) return C.showErrors(form, res);
        done.textContent = project ? 'Saved.' : '';
        onSaved(res.json);
      });
    });
    return form;
  }

  // `#/projects?q=&chain=&offset=`: the search and its page in the URL (a view can be shared).
  C.route('/projects', ['operator'], async (root) => {
    const params = C.hashParams();
    const q = params.get('q') || '';
    const chain = params.get('chain') || '';
    const offset = Math.max(0, Number(params.get('offset')) || 0);
    const search = { q, limit: PAGE, offset, fields: 'summary' };
    if (chain) search.chainId = chain;
    const [page, { communities }] = await Promise.all([
      load('/admin/v1/projects?' + C.query(search)), load('/admin/v1/communities')]);
    const names = new Map(communities.map((c) => [c.id, c.name]));
    const go = (changes) => {
      const next = new URLSearchParams({ q, chain, offset: String(offset) });
      for (const [k, v] of Object.entries(changes)) next.set(k, v);
      for (const [k, v] of [...next.entries()]) if (v === '' || (k === 'offset' && v === '0')) next.delete(k);
      location.hash = '#/projects' + (next.toString() ? '?' + next : '');
    };
    const f = { q: input({ type: 'search', value: q }), chain: select([['', 'Any chain'], ...C.chainOptions()], chain) };
    const searchForm = el('form', { class: 'card form inline', role: 'search', 'aria-label': 'Search projects' },
      field('q', 'Name, slug or contract address', f.q), field('chainId', 'Chain', f.chain),
      el('button', { type: 'submit', text: 'Search' }));
    searchForm.addEventListener('submit', (event) => {
      event.preventDefault();
      go({ q: f.q.value.trim(), chain: f.chain.value, offset: '0' });
    });
    const first = page.total ? offset + 1 : 0;
    const last = offset + page.projects.length;
    const pager = el('nav', { class: 'pager', 'aria-label': 'Pages of projects' },
      el('span', { role: 'status', text: first + '–' + last + ' of ' + C.fmt(page.total) }),
      offset > 0 ? el('button', { type: 'button', class: 'secondary', text: 'Previous page',
                                  onclick: () => go({ offset: String(Math.max(0, offset - PAGE)) }) }) : null,
      page.nextOffset !== null ? el('button', { type: 'button', class: 'secondary', text: 'Next page',
                                                onclick: () => go({ offset: String(page.nextOffset) }) }) : null);
    root.append(C.heading('Projects'), searchForm,
                table('Projects', [
                  { label: 'Name', value: (p) => el('a', { href: '#/projects/' + p.id, text: p.name }) },
                  { label: 'Slug', value: (p) => el('code', { text: p.slug }) },
                  { label: 'Category', value: (p) => p.category || '' },
                  { label: 'Contracts', key: 'contractCount', numeric: true },
                  { label: 'Owner', value: (p) => (p.ownerCommunityId ? names.get(p.ownerCommunityId) || '#' + p.ownerCommunityId : '') },
                ], page.projects),
                pager,
                projectForm(null, communities, (created) => { location.hash = '#/projects/' + created.id; }));
  });

  C.route('/projects/:id', ['operator'], async (root, { id }) => {
    const [project, { communities }] = await Promise.all([load('/admin/v1/projects/' + id), load('/admin/v1/communities')]);
    const error = el('p', { class: 'error', role: 'alert' });
    const remove = C.confirmButton('Delete project', 'Delete ' + project.name,
      'Delete ' + project.name + '? Campaigns that target it must drop it first; its contracts no longer ' +
      'count for targeting or conversions.', async () => {
        const res = await api('DELETE', '/admin/v1/projects/' + project.id);
        if (res.status !== 204) { error.textContent = C.errorText(res); return; }
        location.hash = '#/projects';
      });
    root.append(C.heading(project.name),
                el('p', { class: 'muted', text: 'Slug ' + project.slug + ' · sources: ' + ((project.sources || []).join(', ') || 'the console') }),
                table('Contracts', [
                  { label: 'Chain', value: (c) => C.chainName(c.chainId) },
                  { label: 'Address', value: (c) => C.addressLink(c.chainId, c.address) },
                ], project.contracts.slice(0, 200)),
                project.contracts.length > 200
                  ? el('p', { class: 'muted', text: 'The first 200 of ' + C.fmt(project.contracts.length) + ' contracts.' }) : null,
                projectForm(project, communities, () => C.rerender()),
                el('div', { class: 'card' }, remove, error));
  });
})(window.AdConsole);
