// The viewer's stylesheet and icon, served as files so its pages' CSP can forbid inline code. Plain
// CSS: two panes from 900 px, one below (the list, or the open message), from 360 px up.

export const favicon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="2" y="6" width="28" height="20" rx="4" fill="#2563eb"/><path d="M5 10l11 8 11-8" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round" stroke-linejoin="round"/></svg>
`

export const css = `
:root { color-scheme: light dark; --muted: #6b7280; --line: rgba(127,127,127,.28); --warn: #b45309; --bad: #b91c1c; --ok: #16a34a; --accent: #2563eb; --selected: rgba(37,99,235,.13); --soft: rgba(127,127,127,.08); }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html, body { height: 100%; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; }
a { color: var(--accent); }
.muted { color: var(--muted); }
button, .button { font: inherit; padding: .3rem .7rem; border: 1px solid var(--line); border-radius: 6px; background: transparent; color: inherit; cursor: pointer; text-decoration: none; display: inline-block; white-space: nowrap; }
button:hover, .button:hover { background: var(--soft); }
button[aria-pressed="true"] { background: var(--selected); border-color: var(--accent); }
.danger { color: var(--bad); }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }

.app { display: grid; grid-template-columns: minmax(18rem, 26rem) minmax(0, 1fr); grid-template-rows: auto minmax(0, 1fr); grid-template-areas: "bar bar" "list view"; height: 100vh; height: 100dvh; }
.bar { grid-area: bar; display: flex; align-items: center; gap: .6rem 1rem; padding: .5rem 1rem; border-bottom: 1px solid var(--line); min-width: 0; }
.brand { display: inline-flex; align-items: center; gap: .45rem; font-weight: 650; font-size: 1.05rem; color: inherit; text-decoration: none; white-space: nowrap; }
.bar form { flex: 1 1 12rem; min-width: 0; max-width: 40rem; margin: 0; }
#search { width: 100%; padding: .4rem .65rem; font: inherit; color: inherit; background: transparent; border: 1px solid var(--line); border-radius: 6px; }
.live { white-space: nowrap; color: var(--muted); font-size: .85rem; margin-left: auto; }
.live[data-state="live"]::before { content: "\\25CF "; color: var(--ok); }
.live[data-state="down"]::before { content: "\\25CF "; color: var(--bad); }

.list { grid-area: list; overflow: auto; border-right: 1px solid var(--line); min-width: 0; }
#messages { list-style: none; margin: 0; padding: 0; }
#messages li a { display: grid; grid-template-columns: minmax(0, 1fr) auto; grid-template-areas: "from time" "subject subject" "to tags"; gap: .05rem .6rem; padding: .55rem .9rem .55rem 1.35rem; color: inherit; text-decoration: none; border-bottom: 1px solid var(--line); position: relative; }
#messages li a:hover { background: var(--soft); }
#messages .from, #messages .subject, #messages .to { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0; }
#messages .from { grid-area: from; }
#messages time { grid-area: time; color: var(--muted); font-size: .8rem; white-space: nowrap; }
#messages .subject { grid-area: subject; }
#messages .to { grid-area: to; color: var(--muted); font-size: .85rem; }
#messages .tags { grid-area: tags; display: flex; gap: .4rem; font-size: .8rem; color: var(--muted); white-space: nowrap; }
#messages .org { border: 1px solid var(--line); border-radius: 4px; padding: 0 .3rem; }
#messages li.unread .from, #messages li.unread .subject { font-weight: 650; }
#messages li.unread a::before { content: ""; position: absolute; left: .5rem; top: 1.05rem; width: .45rem; height: .45rem; border-radius: 50%; background: var(--accent); }
#messages li.selected a { background: var(--selected); }
#messages li.empty { padding: 1.5rem 1rem; color: var(--muted); }
h2.waiting { font-size: .75rem; text-transform: uppercase; letter-spacing: .04em; margin: .7rem .9rem .2rem; color: var(--muted); }
#waiting { list-style: none; margin: 0; padding: 0; border-bottom: 2px solid var(--line); }
#waiting li { display: grid; grid-template-columns: minmax(0, 1fr) auto; grid-template-areas: "from time" "subject subject" "to tags"; gap: .05rem .6rem; padding: .45rem .9rem .45rem 1.35rem; border-bottom: 1px solid var(--line); color: var(--muted); }
#waiting .from { grid-area: from; } #waiting time { grid-area: time; font-size: .8rem; } #waiting .subject { grid-area: subject; }
#waiting .to { grid-area: to; font-size: .85rem; } #waiting .tags { grid-area: tags; display: flex; gap: .4rem; font-size: .8rem; }
#waiting .from, #waiting .subject, #waiting .to { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0; }
#waiting .org, #waiting .status { border: 1px solid var(--line); border-radius: 4px; padding: 0 .3rem; }
#more { margin: .75rem 1rem; }
.keys { margin: .75rem 1rem 1.5rem; color: var(--muted); font-size: .85rem; }
.keys dl { display: grid; grid-template-columns: max-content 1fr; gap: .15rem .8rem; margin: .5rem 0 0; }
.keys dd { margin: 0; }
kbd { font: .8rem ui-monospace, monospace; border: 1px solid var(--line); border-radius: 4px; padding: 0 .3rem; }

.view { grid-area: view; overflow: auto; min-width: 0; padding: 1rem 1.5rem 3rem; }
.placeholder { display: grid; place-content: center; height: 100%; text-align: center; color: var(--muted); }
.back { display: none; margin: 0 0 .5rem; }
.message-head { display: flex; flex-wrap: wrap; align-items: flex-start; gap: .5rem 1rem; }
h1 { font-size: 1.3rem; margin: 0; overflow-wrap: anywhere; min-width: 0; flex: 1 1 16rem; }
.actions { display: flex; flex-wrap: wrap; gap: .4rem; }
dl.meta { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .15rem 1rem; margin: .8rem 0; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
ul.warnings { list-style: none; padding: 0; }
ul.warnings li { color: var(--warn); border-left: 3px solid var(--warn); padding: .3rem .6rem; margin: .3rem 0; }
.tabs { display: flex; gap: .1rem; overflow-x: auto; border-bottom: 1px solid var(--line); margin: 1rem 0 .75rem; }
.tabs a { padding: .45rem .7rem; white-space: nowrap; color: inherit; text-decoration: none; border-bottom: 2px solid transparent; }
.tabs a[aria-selected="true"] { border-bottom-color: var(--accent); font-weight: 600; }
.tab h2 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
.tabbed .tab h2 { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
.preview-controls { display: flex; flex-wrap: wrap; gap: .5rem; justify-content: space-between; margin-bottom: .6rem; }
.segmented { display: inline-flex; flex-wrap: wrap; }
.segmented button { border-radius: 0; margin-left: -1px; }
.segmented button:first-child { border-radius: 6px 0 0 6px; margin-left: 0; }
.segmented button:last-child { border-radius: 0 6px 6px 0; }
.previews { display: flex; gap: 1rem; align-items: flex-start; }
.frame { margin: 0; display: flex; flex-direction: column; min-width: 0; }
.frame figcaption { color: var(--muted); font-size: .8rem; margin-bottom: .25rem; }
.frame.desktop { flex: 1 1 0; }
.frame.phone { flex: 0 0 auto; width: 377px; max-width: 100%; }
.frame iframe { display: block; width: 100%; height: max(26rem, calc(100dvh - 17rem)); border: 1px solid var(--line); border-radius: 6px; background: #fff; resize: vertical; }
.frame.phone iframe { height: min(812px, max(26rem, calc(100dvh - 17rem))); }
.previews[data-width="desktop"] .phone, .previews[data-width="phone"] .desktop { display: none; }
.previews[data-width="phone"] .phone { margin: 0 auto; }
.previews-images { display: flex; flex-wrap: wrap; gap: .75rem; margin-bottom: 1rem; }
.previews-images figure { margin: 0; max-width: 12rem; }
.previews-images img { display: block; max-width: 100%; max-height: 10rem; border: 1px solid var(--line); border-radius: 4px; background: repeating-conic-gradient(#ddd 0 25%, #fff 0 50%) 0 0 / 16px 16px; }
.previews-images figcaption { font-size: .8rem; color: var(--muted); overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: .35rem .5rem; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
th { font-weight: 600; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--soft); padding: .7rem; margin: 0; max-height: 70vh; overflow: auto; border-radius: 6px; }
.problem { color: var(--bad); }
.ok { color: var(--ok); }
.gone { padding: 1rem 1.5rem; }

@media (max-width: 899px) {
  .app { grid-template-columns: minmax(0, 1fr); grid-template-areas: "bar" "main"; }
  .list, .view { grid-area: main; border-right: 0; }
  .at-list .view, .at-message .list { display: none; }
  .back { display: block; }
  .view { padding: .75rem .9rem 2rem; }
  .previews { flex-direction: column; }
  .frame.desktop, .frame.phone { flex: none; width: 100%; }
}
@media (max-width: 560px) {
  .bar { flex-wrap: wrap; padding: .5rem .75rem; }
  .bar form { order: 3; flex-basis: 100%; max-width: none; }
}
`
