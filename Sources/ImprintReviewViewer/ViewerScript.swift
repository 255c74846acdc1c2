/// The viewer, inline in every snapshot (allowed by its hash in the page's
/// Content-Security-Policy): standard web platform only (WebCrypto, DecompressionStream,
/// the CSS Custom Highlight API where present), no framework, no build step.
///
/// It never puts document text into markup: every character of the body, the title and the
/// comments reaches the page as a text node (`createTextNode`, `textContent`), so nothing a
/// collaborator wrote can run. Links keep only `http:`, `https:` and `mailto:` targets.
///
/// Marks for tests and benchmarks (`performance.getEntriesByName`): `imprint-kdf-start`,
/// `imprint-kdf-end`, `imprint-decrypt-start`, `imprint-readable`. `document.body.dataset.state`
/// is `locked`, `open` or `failed`, and `data-error` names a failure (`password`,
/// `tampered`, `expired`, `revoked`, `invalid`, `unsupported`).
enum ViewerScript {
    static let js = #"""
(() => {
'use strict';
const $ = (id) => document.getElementById(id);
const enc = new TextEncoder();
const LINK_COMMENT_BYTES = 10000;
const FORMAT = 'imprint-review/1';
const CONTENT_FORMAT = 'imprint-review-content/1';
const COMMENTS_FORMAT = 'imprint-comments/1';

class ReviewError extends Error { constructor(kind, message) { super(message); this.kind = kind; } }

function b64decode(text) {
  if (typeof text !== 'string') throw new ReviewError('invalid', 'This review copy is damaged (a field is missing).');
  const s = text.replace(/-/g, '+').replace(/_/g, '/');
  let bin;
  try { bin = atob(s + '='.repeat((4 - s.length % 4) % 4)); } catch (e) { throw new ReviewError('invalid', 'This review copy is damaged (bad encoding).'); }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
function b64encode(bytes) {
  const u = new Uint8Array(bytes);
  let bin = '';
  for (let i = 0; i < u.length; i += 0x8000) bin += String.fromCharCode.apply(null, u.subarray(i, i + 0x8000));
  return btoa(bin);
}
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
function setStatus(message, isError) {
  const s = $('status');
  s.textContent = message || '';
  s.className = isError ? 'error' : '';
}
function fail(error) {
  const kind = error instanceof ReviewError ? error.kind : 'invalid';
  const message = error instanceof ReviewError ? error.message : 'This review copy could not be opened: ' + (error && error.message || error);
  document.body.dataset.state = 'failed';
  document.body.dataset.error = kind;
  setStatus(message, true);
  if (kind === 'password') {
    document.body.dataset.state = 'locked';
    $('password').value = '';
    $('password').focus();
  }
}

// ---- Envelope -------------------------------------------------------------------------
let envelope = null;
try { envelope = JSON.parse($('imprint-envelope').textContent); } catch (e) { envelope = null; }
const state = { key: null, content: null, pending: [], local: [], selection: null, replyTo: null, link: null };

async function importContentKey(raw) {
  return crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
}
function aad() { return enc.encode(FORMAT + ' ' + envelope.snapshotId); }

async function unwrapWithPassword(password) {
  const p = envelope.password;
  if (!p || p.kdf !== 'PBKDF2-SHA256' || !(p.iterations >= 600000 && p.iterations <= 10000000)) {
    throw new ReviewError('unsupported', 'This review copy uses a key derivation this viewer does not support.');
  }
  performance.mark('imprint-kdf-start');
  const base = await crypto.subtle.importKey('raw', enc.encode(password), 'PBKDF2', false, ['deriveKey']);
  const wrapping = await crypto.subtle.deriveKey({ name: 'PBKDF2', hash: 'SHA-256', salt: b64decode(p.salt), iterations: p.iterations },
    base, { name: 'AES-GCM', length: 256 }, false, ['decrypt']);
  performance.mark('imprint-kdf-end');
  let raw;
  try {
    raw = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: b64decode(p.wrappedKey.iv), additionalData: aad() }, wrapping, b64decode(p.wrappedKey.data));
  } catch (e) {
    if (e instanceof ReviewError) throw e;
    throw new ReviewError('password', 'Wrong password. Check it and try again.');
  }
  return importContentKey(raw);
}

async function openPayload(key, sealed) {
  performance.mark('imprint-decrypt-start');
  if (!sealed) throw new ReviewError('invalid', 'This review copy holds no document.');
  let packed;
  try {
    packed = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: b64decode(sealed.iv), additionalData: aad() }, key, b64decode(sealed.data));
  } catch (e) {
    if (e instanceof ReviewError) throw e;
    throw new ReviewError('tampered', 'This review copy was damaged or tampered with: it does not decrypt. Ask the owner for a new one.');
  }
  let content;
  try {
    const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
    content = JSON.parse(await new Response(stream).text());
  } catch (e) {
    throw new ReviewError('invalid', 'This review copy is damaged (its document does not unpack).');
  }
  if (!content || content.format !== CONTENT_FORMAT || content.snapshotId !== envelope.snapshotId || typeof content.body !== 'string'
      || !content.anchors || !Array.isArray(content.anchors.runs) || !Array.isArray(content.anchors.actors)) {
    throw new ReviewError('invalid', 'This review copy is damaged or from a newer Imprint.');
  }
  if (content.expires && Date.parse(content.expires) < Date.now()) {
    throw new ReviewError('expired', 'This review copy expired on ' + new Date(content.expires).toLocaleString() + '. Ask the owner for a new one.');
  }
  return content;
}

// ---- Positions: UTF-16 offsets, code points, cursors ------------------------------------
let body = '';
let astral = [];          // UTF-16 offsets of high surrogates, ascending
let runStarts = [];       // code-point start of each anchor run
let absoluteRuns = [];    // actor index, counter, length per run
const textNodes = [];     // rendered body text nodes, in order
const sourceStart = new WeakMap(); // text node -> UTF-16 offset in body

function indexBodyPositions(content) {
  body = content.body;
  astral = [];
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (c >= 0xD800 && c <= 0xDBFF) astral.push(i);
  }
  // Runs arrive as actor, counter delta (from the end of that actor's previous run), length.
  const packed = content.anchors.runs, lastEnd = new Map();
  const runs = new Array(packed.length);
  runStarts = [];
  let at = 0;
  for (let r = 0; r + 2 < packed.length; r += 3) {
    const actor = packed[r], counter = (lastEnd.get(actor) || 0) + packed[r + 1], length = packed[r + 2];
    runs[r] = actor; runs[r + 1] = counter; runs[r + 2] = length;
    lastEnd.set(actor, counter + length);
    runStarts.push(at); at += length;
  }
  absoluteRuns = runs;
}
function upperBound(sorted, value) { // number of entries < value
  let lo = 0, hi = sorted.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (sorted[mid] < value) lo = mid + 1; else hi = mid; }
  return lo;
}
function codePointOf(u16) { return astral.length ? u16 - upperBound(astral, u16) : u16; }
function utf16Of(cp) {
  if (!astral.length) return cp;
  let lo = 0, hi = body.length;   // smallest u16 with codePointOf(u16) >= cp
  while (lo < hi) { const mid = (lo + hi) >> 1; if (codePointOf(mid) < cp) lo = mid + 1; else hi = mid; }
  return lo;
}
function cursorAt(cp, side) {
  const runs = absoluteRuns, actors = state.content.anchors.actors;
  let lo = 0, hi = runStarts.length - 1;
  while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (runStarts[mid] <= cp) lo = mid; else hi = mid - 1; }
  const r = lo * 3;
  const offset = cp - runStarts[lo];
  if (offset < 0 || offset >= runs[r + 2]) throw new ReviewError('invalid', 'no anchor for position ' + cp);
  return side + ':' + (runs[r + 1] + offset) + '@' + actors[runs[r]];
}

// ---- Rendering (text nodes only) ----------------------------------------------------------
let assetsByName = new Map();
function addText(parent, start, end) {
  if (end <= start) return;
  const node = document.createTextNode(body.slice(start, end));
  sourceStart.set(node, start);
  textNodes.push(node);
  parent.append(node);
}
function safeHref(href) { return /^(https?:|mailto:)/i.test(href.trim()) ? href.trim() : null; }
function isWordChar(ch) { return !!ch && /[\p{L}\p{N}]/u.test(ch); }

// The ')' that closes a link target opened just before `from`, allowing balanced parentheses.
function closingParen(from, end) {
  let depth = 0;
  for (let j = from; j < end; j++) {
    const ch = body[j];
    if (ch === '\n') return -1;
    if (ch === '(') depth++;
    else if (ch === ')') { if (depth === 0) return j; depth--; }
  }
  return -1;
}

function renderInline(parent, start, end) {
  // Searches stay inside [start, end): a stray marker never scans the rest of the document.
  const line = body.slice(start, end);
  const find = (what, from) => { const k = line.indexOf(what, from - start); return k < 0 ? -1 : k + start; };
  let i = start, textStart = start;
  const flush = (upTo) => { addText(parent, textStart, upTo); };
  while (i < end) {
    const c = body[i];
    if (c === '\\' && i + 1 < end && '\\`*_[]()!#'.includes(body[i + 1])) {
      flush(i); textStart = i + 1; i += 2; continue;
    }
    if (c === '`') {
      const j = find('`', i + 1);
      if (j > i + 1 && j < end) {
        flush(i);
        const code = el('code'); addText(code, i + 1, j); parent.append(code);
        i = j + 1; textStart = i; continue;
      }
    } else if ((c === '*' || c === '_') && !(c === '_' && isWordChar(body[i - 1]))) {
      const double = body[i + 1] === c;
      const marker = double ? c + c : c;
      const j = find(marker, i + marker.length);
      if (j > i + marker.length && j + marker.length <= end && body[i + marker.length] !== ' ' && body[j - 1] !== ' ') {
        flush(i);
        const node = el(double ? 'strong' : 'em');
        renderInline(node, i + marker.length, j);
        parent.append(node);
        i = j + marker.length; textStart = i; continue;
      }
    } else if (c === '!' && body[i + 1] === '[') {
      const close = find('](', i + 2), last = close < 0 ? -1 : find(')', close + 2);
      if (close > 0 && last > 0 && last < end) {
        const target = body.slice(close + 2, last).trim();
        const asset = assetsByName.get(target) || assetsByName.get(target.replace(/^assets\//, ''));
        flush(i);
        if (asset) {
          const img = el('img');
          img.alt = body.slice(i + 2, close);
          img.src = asset;
          parent.append(img);
          // The image's source text stays selectable as its alt text.
        } else {
          addText(parent, i, last + 1);
        }
        i = last + 1; textStart = i; continue;
      }
    } else if (c === '[') {
      const close = find('](', i + 1), last = close < 0 ? -1 : closingParen(close + 2, end);
      if (close > i && last > 0 && last < end && !body.slice(i + 1, close).includes('\n')) {
        flush(i);
        const a = el('a');
        const href = safeHref(body.slice(close + 2, last));
        if (href) { a.href = href; a.rel = 'noopener noreferrer'; a.target = '_blank'; }
        renderInline(a, i + 1, close);
        parent.append(a);
        i = last + 1; textStart = i; continue;
      }
    }
    i++;
  }
  flush(end);
}

function renderBody(container) {
  const lines = [];
  let at = 0;
  while (at <= body.length) {
    let nl = body.indexOf('\n', at);
    if (nl < 0) nl = body.length;
    lines.push([at, nl]);
    at = nl + 1;
  }
  let i = 0;
  let list = null, listKind = '';
  const closeList = () => { list = null; listKind = ''; };
  while (i < lines.length) {
    const [s, e] = lines[i];
    const line = body.slice(s, e);
    if (/^\s*```/.test(line)) {
      closeList();
      let j = i + 1;
      while (j < lines.length && !/^\s*```/.test(body.slice(lines[j][0], lines[j][1]))) j++;
      const pre = el('pre'), code = el('code');
      if (j > i + 1) addText(code, lines[i + 1][0], lines[j - 1][1]);
      pre.append(code); container.append(pre);
      i = j + 1; continue;
    }
    const heading = /^(#{1,6})[ \t]+/.exec(line);
    if (heading) {
      closeList();
      const h = el('h' + heading[1].length);
      renderInline(h, s + heading[0].length, e);
      container.append(h);
      i++; continue;
    }
    const item = /^(\s*)([-*+]|\d{1,9}[.)])[ \t]+/.exec(line);
    if (item) {
      const kind = /\d/.test(item[2]) ? 'ol' : 'ul';
      if (!list || listKind !== kind) { list = el(kind); listKind = kind; container.append(list); }
      const li = el('li');
      renderInline(li, s + item[0].length, e);
      list.append(li);
      i++; continue;
    }
    if (/^\s*$/.test(line)) { closeList(); i++; continue; }
    closeList();
    const p = el('p');
    let j = i;
    while (j < lines.length) {
      const text = body.slice(lines[j][0], lines[j][1]);
      if (j > i && (/^\s*$/.test(text) || /^(#{1,6})[ \t]+/.test(text) || /^\s*```/.test(text) || /^(\s*)([-*+]|\d{1,9}[.)])[ \t]+/.test(text))) break;
      if (j > i) addText(p, lines[j][0] - 1, lines[j][0]); // the newline between lines
      renderInline(p, lines[j][0], lines[j][1]);
      j++;
    }
    container.append(p);
    i = j;
  }
}

// Body position (UTF-16) -> DOM point, for highlights.
function domPoint(u16) {
  let lo = 0, hi = textNodes.length - 1, found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (sourceStart.get(textNodes[mid]) <= u16) { found = mid; lo = mid + 1; } else hi = mid - 1;
  }
  if (found < 0) return textNodes.length ? [textNodes[0], 0] : null;
  const node = textNodes[found], start = sourceStart.get(node);
  return [node, Math.min(u16 - start, node.length)];
}
// DOM point -> body position (UTF-16), or null outside the body.
function bodyOffset(node, offset) {
  if (node.nodeType === Node.TEXT_NODE && sourceStart.has(node)) return sourceStart.get(node) + offset;
  const doc = $('doc-body');
  if (!doc.contains(node)) return null;
  const probe = document.createRange();
  probe.setStart(node, offset);
  for (const t of textNodes) { // first text node at or after the point
    if (probe.comparePoint(t, 0) >= 0) return sourceStart.get(t);
  }
  const last = textNodes[textNodes.length - 1];
  return last ? sourceStart.get(last) + last.length : 0;
}

function paintHighlights() {
  if (!(window.CSS && CSS.highlights && window.Highlight)) return;
  const ranges = [];
  for (const c of allComments()) {
    if (c.resolved || c.kind === 'reply' || c.startU16 == null) continue;
    const a = domPoint(c.startU16), b = domPoint(c.endU16);
    if (!a || !b) continue;
    const r = document.createRange();
    try { r.setStart(a[0], a[1]); r.setEnd(b[0], b[1]); ranges.push(r); } catch (e) { /* ignore */ }
  }
  CSS.highlights.set('imprint-comment', new Highlight(...ranges));
}

// ---- Comments -----------------------------------------------------------------------------
function allComments() {
  const existing = (state.content.comments || []).map((c) => ({
    id: c.id, kind: c.inReplyTo ? 'reply' : 'comment', author: c.author, text: c.text, quote: c.quote, resolved: !!c.resolved,
    target: c.inReplyTo || null, createdAt: c.createdAt, startU16: c.start == null ? null : utf16Of(c.start),
    endU16: c.end == null ? null : utf16Of(c.end), sent: true }));
  const mine = state.local.filter((c) => c.kind !== 'resolve').map((c) => Object.assign({}, c, {
    resolved: false, startU16: c.startU16, endU16: c.endU16 }));
  const all = existing.concat(mine);
  for (const r of state.local) if (r.kind === 'resolve') { const t = all.find((c) => c.id === r.target); if (t) t.resolved = true; }
  return all;
}
function newId() {
  return (crypto.randomUUID ? crypto.randomUUID() : b64encode(crypto.getRandomValues(new Uint8Array(16))).replace(/[^A-Za-z0-9]/g, 'x'));
}
function authorName() { return $('comment-author').value.trim().slice(0, 200); }

function renderComments() {
  const list = $('comment-list');
  list.replaceChildren();
  const all = allComments();
  const roots = all.filter((c) => c.kind === 'comment').sort((a, b) => (a.startU16 ?? 1e15) - (b.startU16 ?? 1e15) || a.createdAt - b.createdAt);
  for (const c of roots) {
    const li = el('li', 'comment' + (c.resolved ? ' resolved' : ''));
    li.dataset.commentId = c.id;
    const quote = c.shown || c.quote;
    if (quote) li.append(el('blockquote', 'quote', quote.length > 300 ? quote.slice(0, 300) + '…' : quote));
    li.append(el('div', 'comment-text', c.text));
    li.append(el('div', 'meta', (c.author || 'Anonymous') + ' · ' + new Date(c.createdAt).toLocaleString() + (c.resolved ? ' · resolved' : '')));
    if (!c.sent) li.append(el('div', 'pending', 'not sent yet'));
    const replies = all.filter((r) => r.kind === 'reply' && r.target === c.id).sort((a, b) => a.createdAt - b.createdAt);
    if (replies.length) {
      const ol = el('ol', 'replies');
      for (const r of replies) {
        const rli = el('li');
        rli.append(el('div', 'comment-text', r.text));
        rli.append(el('div', 'meta', (r.author || 'Anonymous') + ' · ' + new Date(r.createdAt).toLocaleString()));
        if (!r.sent) rli.append(el('div', 'pending', 'not sent yet'));
        ol.append(rli);
      }
      li.append(ol);
    }
    const actions = el('div', 'actions');
    const reply = el('button', 'secondary', 'Reply'); reply.type = 'button';
    reply.addEventListener('click', () => openForm({ replyTo: c }));
    actions.append(reply);
    if (!c.resolved) {
      const resolve = el('button', 'secondary', 'Resolve'); resolve.type = 'button';
      resolve.addEventListener('click', () => addLocal({ kind: 'resolve', target: c.id, text: '' }));
      actions.append(resolve);
    }
    if (c.startU16 != null) {
      const show = el('button', 'secondary', 'Show in text'); show.type = 'button';
      show.addEventListener('click', () => {
        const a = domPoint(c.startU16);
        if (a) a[0].parentElement.scrollIntoView({ behavior: 'smooth', block: 'center' });
      });
      actions.append(show);
    }
    li.append(actions);
    list.append(li);
  }
  $('pending-count').textContent = String(state.local.filter((c) => !c.sent).length);
  $('download').disabled = state.local.length === 0;
  paintHighlights();
}

function currentSelection() {
  const sel = window.getSelection();
  if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
  const range = sel.getRangeAt(0);
  const a = bodyOffset(range.startContainer, range.startOffset), b = bodyOffset(range.endContainer, range.endOffset);
  if (a == null || b == null || b <= a) return null;
  return { startU16: a, endU16: b, shown: range.toString() };
}
function updateSelection() {
  const s = currentSelection();
  if (s) state.selection = s;
  $('comment').disabled = !s && !state.selection;
}
function openForm(options) {
  state.replyTo = options && options.replyTo || null;
  if (!state.replyTo) {
    const s = currentSelection() || state.selection;
    if (!s) { setStatus('Select some text first, then choose Comment.'); return; }
    state.selection = s;
    if (window.CSS && CSS.highlights && window.Highlight) {
      const a = domPoint(s.startU16), b = domPoint(s.endU16), r = document.createRange();
      try { r.setStart(a[0], a[1]); r.setEnd(b[0], b[1]); CSS.highlights.set('imprint-selected', new Highlight(r)); } catch (e) { /* ignore */ }
    }
  }
  $('form-title').textContent = state.replyTo ? 'Reply to ' + (state.replyTo.author || 'Anonymous') : 'Comment on “' + (state.selection.shown || quoteOf(state.selection)).slice(0, 80) + '”';
  $('comment-form').hidden = false;
  $('comment-text').value = '';
  $('comment-text').focus();
}
function closeForm() {
  $('comment-form').hidden = true;
  state.replyTo = null;
  if (window.CSS && CSS.highlights) CSS.highlights.delete('imprint-selected');
}
function quoteOf(s) { return s ? body.slice(s.startU16, s.endU16) : ''; }

async function addLocal(fields) {
  const comment = Object.assign({ id: newId(), snapshotId: envelope.snapshotId, author: authorName(), createdAt: Date.now(), sent: false }, fields);
  state.local.push(comment);
  await savePending();
  renderComments();
  if (state.link) await postComments();
}

async function submitForm(event) {
  event.preventDefault();
  const text = $('comment-text').value.trim();
  if (!text) { $('comment-text').focus(); return; }
  try { localStorage.setItem('imprint-review:author', authorName()); } catch (e) { /* storage may be off */ }
  // A link posts each comment as one record the server takes up to 16 KiB of (sealed,
  // base64): keep the words under 10,000 bytes and say so rather than fail to send.
  const quoted = state.replyTo ? '' : quoteOf(state.selection);
  if (state.link && enc.encode(text).length + enc.encode(quoted).length > LINK_COMMENT_BYTES) {
    setStatus('This comment is too long to send through a link: shorten it or select fewer words.', true);
    return;
  }
  if (state.replyTo) {
    await addLocal({ kind: 'reply', target: state.replyTo.id, text });
  } else {
    const s = state.selection;
    const startCp = codePointOf(s.startU16), endCp = codePointOf(s.endU16);
    await addLocal({ kind: 'comment', text, quote: quoteOf(s), start: cursorAt(startCp, 'before'), end: cursorAt(endCp - 1, 'after'),
      startU16: s.startU16, endU16: s.endU16, shown: s.shown });
    state.selection = null;
  }
  closeForm();
  // The link form has posted it already and said how that went.
  if (!state.link) setStatus('Comment saved in this browser. Use “Download comments” to send your comments to the owner.');
}

// Unsent comments survive a closed tab: kept in localStorage, sealed under the snapshot key.
function storageKey() { return 'imprint-review:' + envelope.snapshotId; }
async function savePending() {
  try {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const data = await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: enc.encode('imprint-review-pending ' + envelope.snapshotId) },
      state.key, enc.encode(JSON.stringify(state.local)));
    localStorage.setItem(storageKey(), JSON.stringify({ iv: b64encode(iv), data: b64encode(data) }));
  } catch (e) {
    setStatus('This browser does not keep data for this page: download your comments before closing it.', true);
  }
}
async function loadPending() {
  let stored = null;
  try { stored = localStorage.getItem(storageKey()); } catch (e) { return; }
  if (!stored) return;
  try {
    const box = JSON.parse(stored);
    const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: b64decode(box.iv), additionalData: enc.encode('imprint-review-pending ' + envelope.snapshotId) },
      state.key, b64decode(box.data));
    const list = JSON.parse(new TextDecoder().decode(plain));
    if (Array.isArray(list)) state.local = list;
  } catch (e) { /* a foreign or damaged entry: ignore */ }
}

async function sealToOwner(comment) {
  const owner = await crypto.subtle.importKey('raw', b64decode(state.content.commentKey), { name: 'ECDH', namedCurve: 'P-256' }, false, []);
  const eph = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']);
  const bits = await crypto.subtle.deriveBits({ name: 'ECDH', public: owner }, eph.privateKey, 256);
  const ikm = await crypto.subtle.importKey('raw', bits, 'HKDF', false, ['deriveKey']);
  const key = await crypto.subtle.deriveKey({ name: 'HKDF', hash: 'SHA-256', salt: enc.encode(envelope.snapshotId), info: enc.encode('imprint-review-comment/1') },
    ikm, { name: 'AES-GCM', length: 256 }, false, ['encrypt']);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const plain = { id: comment.id, snapshotId: envelope.snapshotId, kind: comment.kind, author: comment.author, text: comment.text,
    start: comment.start || null, end: comment.end || null, quote: comment.quote || null, target: comment.target || null, createdAt: comment.createdAt };
  const data = await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: enc.encode(envelope.snapshotId) }, key, enc.encode(JSON.stringify(plain)));
  return { epk: b64encode(await crypto.subtle.exportKey('raw', eph.publicKey)), iv: b64encode(iv), data: b64encode(data) };
}

async function commentFileText() {
  const items = [];
  for (const c of state.local) items.push(await sealToOwner(c));
  return JSON.stringify({ format: COMMENTS_FORMAT, snapshotId: envelope.snapshotId, items });
}
async function download() {
  const text = await commentFileText();
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = el('a');
  a.href = url;
  a.download = 'review-' + envelope.snapshotId.slice(0, 8) + '.imprint-comments';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  for (const c of state.local) c.sent = true;
  await savePending();
  renderComments();
  setStatus('Saved ' + state.local.length + ' comment' + (state.local.length === 1 ? '' : 's') + ' to ' + a.download + '. Send that file to the owner.');
}

// ---- Link form: fetch the snapshot, post comments -------------------------------------------
function parseFragment(hash) {
  const m = /^#v1\.([0-9a-f]{32})\.([0-9a-f]{32})\.([0-9a-f]{32})\.([A-Za-z0-9_-]{43})$/.exec(hash);
  return m ? { snapshotId: m[1], recordName: m[2], commentCapability: m[3], key: m[4] } : null;
}
function linkServer() { return (envelope.link.server || location.origin).replace(/\/+$/, ''); }
function linkZone() { return envelope.link.zoneId || 'share_' + envelope.snapshotId; }
async function xrpc(method, query, init) {
  const url = new URL(linkServer() + '/xrpc/app.imprint.zone.' + method);
  for (const [k, v] of Object.entries(query || {})) url.searchParams.set(k, v);
  let response;
  try { response = await fetch(url, Object.assign({ credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer' }, init || {})); }
  catch (e) { throw new ReviewError('network', 'The server cannot be reached. Try again later.'); }
  if (response.status === 410) throw new ReviewError('revoked', 'This review link was revoked or has expired.');
  if (response.status === 404) throw new ReviewError('revoked', 'This review link is not valid: the server has no such snapshot.');
  if (!response.ok) throw new ReviewError('network', 'The server answered ' + response.status + '.');
  return response;
}
async function fetchLinkedEnvelope(link) {
  const record = (await (await xrpc('getRecord', { zoneId: linkZone(), recordName: link.recordName })).json()).record;
  const bytes = await (await xrpc('getAsset', { zoneId: linkZone(), hash: record.asset.hash, recordName: link.recordName })).arrayBuffer();
  const stored = JSON.parse(new TextDecoder().decode(bytes));
  if (stored.snapshotId !== envelope.snapshotId || !stored.payload) throw new ReviewError('invalid', 'The server returned another snapshot.');
  return stored.payload;
}
async function postComments() {
  const unsent = state.local.filter((c) => !c.sent);
  if (!unsent.length) return;
  try {
    const records = [];
    for (const c of unsent) records.push({ recordName: 'c-' + c.id, recordType: 'comment', fields: {}, assetData: b64encode(enc.encode(JSON.stringify(await sealToOwner(c)))) });
    await xrpc('saveRecords', {}, { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ zoneId: linkZone(), records, snapshotName: state.link.recordName, commentCapability: state.link.commentCapability }) });
    for (const c of unsent) c.sent = true;
    await savePending();
    renderComments();
    setStatus('Sent to the owner.');
  } catch (e) {
    setStatus((e && e.message || 'Sending failed') + ' Your comments are kept in this browser and sent next time.', true);
  }
}

// ---- Opening ----------------------------------------------------------------------------------
async function show(content) {
  state.content = content;
  indexBodyPositions(content);
  for (const a of content.assets || []) {
    try {
      const url = URL.createObjectURL(new Blob([b64decode(a.data)], { type: a.mime }));
      assetsByName.set(a.name, url); assetsByName.set(a.hash, url);
    } catch (e) { /* skip a damaged image */ }
  }
  document.title = (content.title || 'Untitled') + ' — review copy';
  $('doc-title').textContent = 'Review copy · exported ' + new Date(content.exportedAt).toLocaleString() + (content.expires ? ' · expires ' + new Date(content.expires).toLocaleString() : '');
  // The title as a heading, unless the body opens with it already.
  const firstLine = content.body.split('\n', 1)[0].replace(/^#{1,6}[ \t]+/, '').trim();
  $('doc-heading').textContent = content.title || 'Untitled';
  $('doc-heading').hidden = !!content.title && firstLine === content.title.trim() && /^#/.test(content.body);
  performance.mark('imprint-decrypted');
  renderBody($('doc-body'));
  performance.mark('imprint-rendered');
  $('unlock').hidden = true;
  $('reader').hidden = false;
  document.body.dataset.state = 'open';
  delete document.body.dataset.error;
  try { $('comment-author').value = localStorage.getItem('imprint-review:author') || ''; } catch (e) { /* ignore */ }
  await loadPending();
  renderComments();
  performance.mark('imprint-comments-shown');
  setStatus('');
  void document.body.offsetHeight; // layout done: the text is readable
  performance.mark('imprint-readable');
}

async function unlock(event) {
  if (event) event.preventDefault();
  const password = $('password').value;
  if (!password) return;
  $('open').disabled = true;
  setStatus('Opening…');
  try {
    state.key = await unwrapWithPassword(password);
    await show(await openPayload(state.key, envelope.payload));
  } catch (e) {
    fail(e);
  } finally {
    $('open').disabled = false;
  }
}

async function openLink(link) {
  if (envelope.snapshotId && envelope.snapshotId !== link.snapshotId) {
    fail(new ReviewError('invalid', 'This link belongs to another review copy than this file.'));
    return;
  }
  envelope.snapshotId = link.snapshotId;
  state.link = link;
  $('download').hidden = true;
  setStatus('Opening…');
  try {
    state.key = await importContentKey(b64decode(link.key));
    await show(await openPayload(state.key, await fetchLinkedEnvelope(link)));
    await postComments();
  } catch (e) { fail(e); }
}

async function start() {
  document.body.dataset.state = 'locked';
  if (!envelope || envelope.format !== FORMAT || typeof envelope.snapshotId !== 'string') {
    fail(new ReviewError(envelope ? 'unsupported' : 'invalid', envelope ? 'This review copy was made by a newer Imprint; this viewer cannot open it.' : 'This file is not a readable review copy (its data is damaged).'));
    return;
  }
  $('comment').addEventListener('click', () => openForm());
  $('comment-form').addEventListener('submit', (e) => { submitForm(e).catch(fail); });
  $('cancel').addEventListener('click', closeForm);
  $('download').addEventListener('click', () => { download().catch(fail); });
  document.addEventListener('selectionchange', updateSelection);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !$('comment-form').hidden) closeForm();
    if ((e.ctrlKey || e.metaKey) && e.altKey && (e.key === 'm' || e.key === 'M')) { e.preventDefault(); openForm(); }
  });
  if (envelope.link) {
    const link = parseFragment(location.hash);
    if (link) { await openLink(link); return; }
    if (!envelope.snapshotId) {
      fail(new ReviewError('invalid', 'This review link is incomplete or damaged. Copy the whole link, including the part after #.'));
      return;
    }
    // The owner's self-contained file, opened without the link: ask for it.
    $('link-entry').hidden = false;
    $('link-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const text = $('link-text').value.trim();
      const pasted = parseFragment(text.slice(Math.max(0, text.indexOf('#'))));
      if (!pasted) { setStatus('This is not a whole review link: copy all of it, including the part after #.', true); return; }
      $('link-entry').hidden = true;
      openLink(pasted).catch(fail);
    });
    $('link-text').focus();
    return;
  }
  $('unlock').hidden = false;
  $('unlock-form').addEventListener('submit', unlock);
  $('password').focus();
}

window.imprintReview = { commentFileText, cursorAt, codePointOf };
start().catch(fail);
})();
"""#
}
