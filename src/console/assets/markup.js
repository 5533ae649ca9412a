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
    { key: 'LANDSCAPE', label: 'LANDSCAPE · 640 × 360 (16:9)', width: 640, height: 360 },
    { key: 'LONG_BANNER', label: 'LONG_BANNER · 1456 × 180 (8.09:1)', width: 1456, height: 180 },
    { key: 'SHORT_BANNER', label: 'SHORT_BANNER · 640 × 200 (16:5)', width: 640, height: 200 },
    { key: 'NO_IMAGE', label: 'NO_IMAGE · text only' },
  ];
  // An image whose width:height is further than this from its format's is cropped or
  // letterboxed by the publisher's slot: the preview warns.
  const RATIO_TOLERANCE = 0.05;

  function fileName(url) {
    try { const u = new URL(url); return u.host + u.pathname; } catch (e) { return url; }
  }

  // Images already loaded (url → {w, h}, or 'error'): a preview redrawn on every keystroke draws
  // them at once, at their final size, instead of moving the form while they load again.
  const loaded = new Map();

  function describe(format, note, size) {
    if (size === 'error') {
      note.className = 'image-note warning';
      note.textContent = 'The image did not load.';
      return;
    }
    const want = format.width / format.height;
    const off = size.h > 0 ? Math.abs(size.w / size.h - want) / want : 1;
    note.className = 'image-note ' + (off > RATIO_TOLERANCE ? 'warning' : 'muted');
    note.textContent = 'Image ' + size.w + ' × ' + size.h + (off > RATIO_TOLERANCE
      ? ': its ratio (' + (size.w / size.h).toFixed(2) + ':1) does not fit ' + format.width + ' × ' + format.height +
        ' (' + want.toFixed(2) + ':1); slots will crop or letterbox it'
      : (size.w < format.width ? ': smaller than ' + format.width + ' × ' + format.height + ', shown enlarged' : ''));
  }

  // The image in a frame at the format's ratio (issue 38 item 4), with its pixel size once it
  // loaded and a warning when its ratio does not fit the format's; without an image (or before
  // it loads, or when it cannot) the frame shows the image's address.
  function imageFrame(format, url) {
    if (format.key === 'NO_IMAGE') return null;
    const label = el('span', { text: url ? fileName(url) : 'no image: not served in this format' });
    const frame = el('div', { class: 'ad-img ad-img-' + format.key.toLowerCase() }, label);
    const note = el('p', { class: 'image-note muted', role: 'status' });
    // https (the API's rule for ads) or this server's own (a demo's creatives).
    if (!url || !(/^https:\/\//.test(url) || url.startsWith(location.origin + '/'))) return [frame, note];
    const img = el('img', { src: url, alt: 'The ' + format.key + ' image', referrerpolicy: 'no-referrer' });
    const known = loaded.get(url);
    if (known) {
      if (known !== 'error') frame.replaceChildren(img);
      describe(format, note, known);
      return [frame, note];
    }
    img.addEventListener('load', () => {
      loaded.set(url, { w: img.naturalWidth, h: img.naturalHeight });
      frame.replaceChildren(img);
      describe(format, note, loaded.get(url));
    });
    img.addEventListener('error', () => {
      loaded.set(url, 'error');
      describe(format, note, 'error');
    });
    return [frame, note];
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
            imageFrame(f, images[f.key]),
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
