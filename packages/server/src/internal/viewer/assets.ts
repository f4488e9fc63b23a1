// The viewer's stylesheet and script, served as files so its pages' CSP can forbid inline code. Plain
// CSS and JavaScript: no build step, no framework, nothing fetched from the network.

export const css = `
:root { color-scheme: light dark; --muted: #6b7280; --line: #d1d5db; --warn: #b45309; --bad: #b91c1c; --accent: #2563eb; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; padding: 1rem 1.5rem 3rem; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: .5rem 1.5rem; }
h1 { font-size: 1.35rem; margin: .2rem 0; overflow-wrap: anywhere; }
h2 { font-size: 1.05rem; margin: 1.8rem 0 .5rem; }
a { color: var(--accent); }
.note, .muted { color: var(--muted); }
#live[data-state="live"]::before { content: "\\25CF "; color: #16a34a; }
#live[data-state="down"]::before { content: "\\25CF "; color: var(--bad); }
form[role="search"] { display: flex; gap: .5rem; margin: .8rem 0; }
input[type="search"] { flex: 1; max-width: 32rem; padding: .35rem .5rem; font: inherit; }
button { font: inherit; padding: .3rem .7rem; cursor: pointer; }
button.danger { color: var(--bad); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: .35rem .5rem; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
th { font-weight: 600; }
td.count { text-align: right; }
tr.empty td { color: var(--muted); padding: 1.5rem .5rem; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: .8rem 0; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
ul.warnings { list-style: none; padding: 0; }
ul.warnings li { color: var(--warn); border-left: 3px solid var(--warn); padding: .3rem .6rem; margin: .3rem 0; }
nav.sections { display: flex; flex-wrap: wrap; gap: .3rem 1rem; margin: 1rem 0; }
iframe { width: 100%; height: 32rem; border: 1px solid var(--line); background: #fff; resize: vertical; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: rgba(127,127,127,.08); padding: .7rem; margin: 0; max-height: 40rem; overflow: auto; }
.problem { color: var(--bad); }
.ok { color: #16a34a; }
`

export const js = `"use strict"
const base = "/_mailroom/outbox/"
const localTimes = (root) => {
  for (const time of root.querySelectorAll("time[datetime]")) {
    time.textContent = new Date(time.dateTime).toLocaleString()
  }
}
localTimes(document)

// The list stays live: the server says when messages came or went, and the rows are fetched again.
const rows = document.querySelector("#messages tbody")
if (rows) {
  const search = document.querySelector("#search")
  const count = document.querySelector("#count")
  const live = document.querySelector("#live")
  let pending = 0
  const refresh = async () => {
    const mine = ++pending
    const response = await fetch(base + "rows?q=" + encodeURIComponent(search.value), { headers: { "x-mailroom-viewer": "1" } })
    // An older answer must not overwrite a newer search.
    if (!response.ok || mine !== pending) return
    const body = await response.text()
    if (mine !== pending) return
    rows.innerHTML = body
    count.textContent = response.headers.get("x-mailroom-count")
    localTimes(rows)
  }
  const source = new EventSource(base + "events")
  source.addEventListener("open", () => {
    live.textContent = "live"
    live.dataset.state = "live"
    // Whatever changed while the connection was down.
    refresh()
  })
  source.addEventListener("change", () => refresh())
  source.addEventListener("error", () => {
    live.textContent = "reconnecting"
    live.dataset.state = "down"
  })
  let typing
  search.addEventListener("input", () => {
    clearTimeout(typing)
    typing = setTimeout(() => {
      const q = search.value.trim()
      history.replaceState(null, "", q === "" ? base : base + "?q=" + encodeURIComponent(q))
      refresh()
    }, 150)
  })
}

document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-delete]")
  if (!button) return
  if (!confirm(button.dataset.confirm)) return
  button.disabled = true
  const response = await fetch(button.dataset.delete, { method: "DELETE", headers: { "x-mailroom-viewer": "1" } })
  if (response.ok) location.assign(button.dataset.then)
  else {
    button.disabled = false
    alert("The viewer answered " + response.status + ": nothing was deleted.")
  }
})
`
