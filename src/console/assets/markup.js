// adserver console: an ad's content markup (spec 2.5: **bold**, *italic*, __underline__,
// bullets "* ", the two characters \n as a line break) rendered as DOM nodes (never HTML
// strings), and the ad preview in the four image formats.
'use strict';

(function (C) {
  const { el } = C;

  // Inline markup of one line: `***x***` bold italic, `**x**`, `*x*`, `__x__`. An unclosed
  // marker stays text (the API rejects such content; the preview shows it as typed).
  const MARKERS = [['***', (inner) => el('strong', {}, el('em', {}, inner))],
                   ['**', (inner) => el('strong', {}, inner)],
                   ['__', (inner) => el('u', {}, inner)],
                   ['*', (inner) => el('em', {}, inner)]];

  function inline(text) {
    const out = [];
    let plain = '';
    let i = 0;
    while (i < text.length) {
      let matched = false;
      for (const [marker, make] of MARKERS) {
        if (!text.startsWith(marker, i)) continue;
        const end = text.indexOf(marker, i + marker.length);
        if (end <= i + marker.length) continue;
        if (plain) { out.push(plain); plain = ''; }
        out.push(make(inline(text.slice(i + marker.length, end))));
        i = end + marker.length;
        matched = true;
        break;
      }
      if (!matched) plain += text[i++];
    }
    if (plain) out.push(plain);
    return out;
  }

  // The whole content: lines split at the two characters `\n`; runs of "* " lines are a list.
  function renderContent(content) {
    const root = el('div', { class: 'ad-content' });
    let list = null;
    const lines = String(content || '').split('\\n');
    lines.forEach((line, index) => {
      if (line.startsWith('* ')) {
        if (!list) { list = el('ul'); root.append(list); }
        list.append(el('li', {}, inline(line.slice(2))));
        return;
      }
      list = null;
      root.append(...inline(line));
      if (index < lines.length - 1 && !(lines[index + 1] || '').startsWith('* ')) root.append(el('br'));
    });
    return root;
  }

  const FORMATS = [
    { key: 'LANDSCAPE', label: 'LANDSCAPE · 640 × 360 (16:9)' },
    { key: 'LONG_BANNER', label: 'LONG_BANNER · 1456 × 180 (8.09:1)' },
    { key: 'SHORT_BANNER', label: 'SHORT_BANNER · 640 × 200 (16:5)' },
    { key: 'NO_IMAGE', label: 'NO_IMAGE · text only' },
  ];

  function fileName(url) {
    try { const u = new URL(url); return u.host + u.pathname; } catch (e) { return url; }
  }

  // The image frame: the console does not load remote images (CSP img-src 'self'), so it shows
  // the frame at the format's ratio with the image's address.
  function imageFrame(format, url) {
    if (format === 'NO_IMAGE') return null;
    return el('div', { class: 'ad-img ad-img-' + format.toLowerCase() },
              el('span', { text: url ? fileName(url) : 'no image: not served in this format' }));
  }

  // One ad ({headline, content, ctaLabel, ctaUrl, images}) as it renders in each format.
  function preview(ad, communityName) {
    const images = ad.images || {};
    return el('div', { class: 'previews', 'aria-label': 'Preview in the four formats', role: 'group' },
      FORMATS.map((f) => {
        const served = f.key === 'NO_IMAGE' || !!images[f.key];
        return el('figure', { class: 'preview preview-' + f.key.toLowerCase(), 'data-format': f.key },
          el('figcaption', { class: 'muted', text: f.label + (served ? '' : ' — not served') }),
          el('div', { class: 'ad ad-' + f.key.toLowerCase() },
            imageFrame(f.key, images[f.key]),
            el('div', { class: 'ad-text' },
              el('p', { class: 'ad-headline', text: ad.headline || 'Headline' }),
              renderContent(ad.content),
              el('p', { class: 'ad-foot' },
                el('span', { class: 'ad-cta', text: ad.ctaLabel || 'Call to action' }),
                el('span', { class: 'ad-community muted', text: communityName || '' })))));
      }));
  }

  C.renderContent = renderContent;
  C.preview = preview;
})(window.AdConsole);
