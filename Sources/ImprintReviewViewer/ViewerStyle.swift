/// The viewer's style sheet, inline in every snapshot (allowed by its hash in the page's
/// Content-Security-Policy). Readable on a phone's width, prints without the controls.
enum ViewerStyle {
    static let css = #"""
:root { color-scheme: light dark; --accent: #2563eb; --muted: #6b7280; --mark: rgba(250, 204, 21, 0.45); --line: rgba(127,127,127,.3); }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 17px/1.6 -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Noto Sans", sans-serif; }
#unlock, #link-entry { max-width: 26rem; margin: 12vh auto; padding: 1.5rem; border: 1px solid var(--line); border-radius: 12px; }
#unlock h1, #link-entry h1 { font-size: 1.3rem; margin-top: 0; }
#unlock label, #link-entry label { display: block; margin-bottom: .3rem; }
input, textarea, button { font: inherit; }
input[type=password], input[type=text], textarea { width: 100%; padding: .45rem .6rem; border: 1px solid var(--line); border-radius: 8px; background: transparent; color: inherit; }
button { padding: .4rem .9rem; border-radius: 8px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: transparent; color: var(--accent); }
button:disabled { opacity: .45; cursor: default; }
button:focus-visible, a:focus-visible, input:focus-visible, textarea:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
#status { max-width: 46rem; margin: 1rem auto; padding: 0 1rem; }
#status.error { color: #b91c1c; font-weight: 600; }
#unlock #status { padding: 0; }
.bar { position: sticky; top: 0; display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; padding: .6rem 1rem; border-bottom: 1px solid var(--line); background: Canvas; z-index: 1; }
.bar .grow { flex: 1; color: var(--muted); font-size: .9rem; }
#layout { display: grid; grid-template-columns: minmax(0, 46rem) minmax(16rem, 22rem); gap: 2rem; justify-content: center; padding: 1rem; }
#doc { min-width: 0; overflow-wrap: anywhere; }
#doc h1.title { font-size: 2rem; line-height: 1.2; }
#doc pre { overflow-x: auto; padding: .8rem; border-radius: 8px; border: 1px solid var(--line); }
#doc code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92em; }
#doc img { max-width: 100%; height: auto; }
#doc p { white-space: pre-wrap; }
/* Long documents: blocks off screen are laid out when scrolled to, not before. */
#doc-body > * { content-visibility: auto; contain-intrinsic-size: auto 4em; }
::highlight(imprint-comment) { background-color: var(--mark); }
::highlight(imprint-selected) { background-color: rgba(37, 99, 235, .3); }
#comments h2 { font-size: 1.1rem; margin-top: 0; }
#comment-list { list-style: none; padding: 0; margin: 0; }
#comment-list li.comment { border: 1px solid var(--line); border-radius: 10px; padding: .6rem .8rem; margin-bottom: .8rem; }
#comment-list li.resolved { opacity: .6; }
.quote { border-left: 3px solid var(--mark); margin: 0 0 .4rem; padding-left: .5rem; color: var(--muted); font-size: .9rem; white-space: pre-wrap; }
.meta { color: var(--muted); font-size: .85rem; }
.comment-text { white-space: pre-wrap; margin: .2rem 0; }
.replies { list-style: none; padding-left: .8rem; border-left: 2px solid var(--line); margin: .4rem 0; }
.actions { display: flex; gap: .4rem; flex-wrap: wrap; margin-top: .3rem; }
.actions button { padding: .15rem .6rem; font-size: .85rem; }
#comment-form { border: 1px solid var(--accent); border-radius: 10px; padding: .8rem; margin-bottom: 1rem; display: grid; gap: .5rem; }
.pending { color: #b45309; font-size: .8rem; }
@media (max-width: 760px) {
  body { font-size: 16px; }
  #layout { grid-template-columns: minmax(0, 1fr); gap: 1rem; padding: .6rem; }
}
@media print {
  .bar, #comment-form, .actions, #status { display: none !important; }
  #layout { display: block; padding: 0; }
  #comments { break-before: page; }
  ::highlight(imprint-comment) { background-color: transparent; text-decoration: underline; }
}
"""#
}
