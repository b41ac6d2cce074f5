// rein's inspector: what would an action act on? Called as
// (function)(mode, x, y) with mode "point" (the element a click at x, y
// hits) or "focus" (the element keys and typing go to). It reads the page and
// changes nothing. Its result is judged by rein's own code, so a page can
// make an element look more dangerous than it is, never less: every text the
// element carries (aria-label, labelledby, title, visible and hidden text,
// CSS-generated text, alt text, button values, form actions) is reported.
(function (mode, x, y) {
  const MAX = 400;
  const clip = (s) => {
    s = String(s == null ? '' : s).replace(/\s+/g, ' ').trim();
    return s.length > MAX ? s.slice(0, MAX) : s;
  };
  const FIELD_TYPES = ['text', 'email', 'search', 'password', 'number', 'tel', 'url', 'date',
    'datetime-local', 'month', 'time', 'week', ''];
  const isField = (el) => {
    const tag = el.tagName;
    if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
    if (tag === 'INPUT') return FIELD_TYPES.includes((el.getAttribute('type') || '').toLowerCase());
    return el.isContentEditable === true;
  };
  const parent = (el) => el.parentElement || (el.getRootNode && el.getRootNode().host) || null;
  const INTERACTIVE = 'a[href],button,input,select,textarea,summary,label,option,' +
    '[role=button],[role=link],[role=menuitem],[role=tab],[role=checkbox],[role=radio],' +
    '[role=switch],[role=option],[onclick],[tabindex]';
  const isInteractive = (el) =>
    (el.matches && el.matches(INTERACTIVE)) || typeof el.onclick === 'function';
  const pointer = (el) => {
    try { return getComputedStyle(el).cursor === 'pointer'; } catch (e) { return false; }
  };
  const pseudo = (el) => {
    const out = [];
    const all = [el, ...el.querySelectorAll('*')].slice(0, 200);
    for (const e of all) {
      for (const p of ['::before', '::after']) {
        let c = '';
        try { c = getComputedStyle(e, p).content; } catch (err) { c = ''; }
        if (c && c !== 'none' && c !== 'normal') out.push(c.replace(/^["']|["']$/g, ''));
      }
    }
    return out.join(' ');
  };
  const labelledBy = (el) => (el.getAttribute('aria-labelledby') || '').split(/\s+/)
    .filter(Boolean)
    .map((id) => { const n = el.ownerDocument.getElementById(id); return n ? n.textContent : ''; })
    .join(' ');
  const texts = (el) => {
    const t = [];
    const add = (s) => { s = clip(s); if (s && !t.includes(s)) t.push(s); };
    add(el.getAttribute('aria-label'));
    add(labelledBy(el));
    add(el.getAttribute('title'));
    add(el.innerText);
    add(el.textContent);
    if (!isField(el) && typeof el.value === 'string') add(el.value);
    add(el.getAttribute('alt'));
    add(el.getAttribute('name'));
    for (const img of el.querySelectorAll('img[alt],[aria-label],[title]')) {
      add(img.getAttribute('alt')); add(img.getAttribute('aria-label')); add(img.getAttribute('title'));
    }
    add(pseudo(el));
    return t;
  };
  const path = (u) => {
    try { const p = new URL(u, document.baseURI); return p.pathname + p.search; } catch (e) { return String(u || ''); }
  };
  const submitControl = (form) => form.querySelector(
    'button:not([type]),button[type=submit],input[type=submit],input[type=image]');
  const isSubmit = (el) => {
    if (el.tagName === 'BUTTON') return (el.getAttribute('type') || 'submit').toLowerCase() === 'submit';
    if (el.tagName === 'INPUT') return ['submit', 'image'].includes((el.getAttribute('type') || '').toLowerCase());
    return false;
  };
  const passwordish = (el) => {
    if (el.tagName !== 'INPUT' && el.tagName !== 'TEXTAREA' && !el.isContentEditable) return false;
    if ((el.getAttribute('type') || '').toLowerCase() === 'password') return true;
    if (/password/i.test(el.getAttribute('autocomplete') || '')) return true;
    try {
      const s = getComputedStyle(el);
      const sec = s.webkitTextSecurity || s.getPropertyValue('-webkit-text-security');
      if (sec && sec !== 'none') return true;
    } catch (e) { /* no style: not masked */ }
    return false;
  };
  const describe = (hit, act) => {
    const r = { found: true, tag: act.tagName.toLowerCase(), role: act.getAttribute('role') || '', texts: [] };
    if (act.tagName === 'INPUT') r.input_type = (act.getAttribute('type') || 'text').toLowerCase();
    if (passwordish(act)) r.input_type = 'password';
    r.texts = texts(act);
    if (hit !== act) r.texts.push(...texts(hit));
    if (act.tagName === 'LABEL' && act.control) r.texts.push(...texts(act.control));
    r.editable = isField(act);
    const link = act.closest ? act.closest('a[href],area[href]') : null;
    if (link) r.href = String(link.href || '');
    const form = act.form || (act.closest && act.closest('form'));
    if (form) {
      const sub = isSubmit(act) ? act : submitControl(form);
      let action = form.getAttribute('action') || '';
      if (sub && sub.hasAttribute('formaction')) action = sub.getAttribute('formaction');
      r.form_action = path(action || document.location.href);
      if (sub) {
        r.submit = texts(sub);
        if (sub.hasAttribute('formaction')) r.submit.push(path(sub.getAttribute('formaction')));
      }
      r.submits = isSubmit(act) || (!r.editable && act.tagName !== 'LABEL' && act.tagName !== 'OPTION' &&
        (isInteractive(act) || pointer(act)));
    }
    return r;
  };
  // the element the event goes to, through shadow roots and same-origin frames
  let doc = document;
  let hit = null;
  if (mode === 'point') {
    hit = doc.elementFromPoint(x, y);
    for (let depth = 0; hit && depth < 10; depth++) {
      if (hit.shadowRoot) {
        const inner = hit.shadowRoot.elementFromPoint(x, y);
        if (inner && inner !== hit) { hit = inner; continue; }
      }
      if (hit.tagName === 'IFRAME' || hit.tagName === 'FRAME') {
        let inner = null;
        try { inner = hit.contentDocument; } catch (e) { inner = null; }
        if (!inner) return { found: true, tag: hit.tagName.toLowerCase(), opaque: true, texts: texts(hit) };
        const rect = hit.getBoundingClientRect();
        x -= rect.left + hit.clientLeft; y -= rect.top + hit.clientTop;
        doc = inner;
        const next = inner.elementFromPoint(x, y);
        if (!next) break;
        hit = next;
        continue;
      }
      break;
    }
  } else {
    hit = doc.activeElement;
    for (let depth = 0; hit && depth < 10; depth++) {
      if (hit.shadowRoot && hit.shadowRoot.activeElement) { hit = hit.shadowRoot.activeElement; continue; }
      if (hit.tagName === 'IFRAME' || hit.tagName === 'FRAME') {
        let inner = null;
        try { inner = hit.contentDocument; } catch (e) { inner = null; }
        if (!inner) return { found: true, tag: hit.tagName.toLowerCase(), opaque: true, texts: texts(hit) };
        hit = inner.activeElement;
        continue;
      }
      break;
    }
    if (hit && (hit.tagName === 'BODY' || hit.tagName === 'HTML')) hit = null;
  }
  if (!hit) return { found: false, texts: [] };
  let act = null;
  for (let e = hit; e; e = parent(e)) {
    if (e.nodeType === 1 && isInteractive(e)) { act = e; break; }
  }
  if (!act) {
    // a clickable div or span: the outermost element of a run of pointer cursors
    for (let e = hit; e && e.nodeType === 1 && pointer(e); e = parent(e)) act = e;
  }
  if (!act) act = hit;
  return describe(hit, act);
})
