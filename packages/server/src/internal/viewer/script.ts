// The viewer's one script, served as a file so its pages' CSP can forbid inline code. Plain JavaScript,
// no build step: the live list, search as you type, the open message beside the list without a page
// load, its tabs, preview widths and remote images, read marks, and keyboard navigation. Without it
// every page still works with links and forms.

export const script = `"use strict"
const base = "/_mailroom/outbox/"
// Sent with every change: a page of another origin cannot send it without CORS.
const own = { "x-mailroom-viewer": "1" }
document.documentElement.classList.add("js")

const localTimes = (root) => {
  for (const time of root.querySelectorAll("time[datetime]")) time.textContent = new Date(time.dateTime).toLocaleString()
}
localTimes(document)

const list = document.querySelector("#messages")
const view = document.querySelector("#view")
const search = document.querySelector("#search")
const more = document.querySelector("#more")
const live = document.querySelector("#live")
const query = () => (search ? search.value.trim() : "")
// The message open, or being opened: the list keeps it selected across its refreshes.
let openId = view?.querySelector("article.message")?.dataset.id
const currentId = () => openId
const messageHref = (id) => base + "messages/" + encodeURIComponent(id)
const withQuery = (path) => (query() === "" ? path : path + "?q=" + encodeURIComponent(query()))
const placeholder = view ? view.innerHTML : ""

const setMore = (next) => {
  if (!more) return
  more.hidden = !next
  more.dataset.next = next || ""
}

// The list is fetched again when the server says the outbox changed, or as the search is typed.
let pending = 0
const refresh = async () => {
  if (!list) return
  const mine = ++pending
  const params = new URLSearchParams()
  if (query() !== "") params.set("q", query())
  if (currentId()) params.set("selected", currentId())
  const response = await fetch(base + "rows?" + params, { headers: own })
  // An older answer must not overwrite a newer search.
  if (!response.ok || mine !== pending) return
  const body = await response.text()
  if (mine !== pending) return
  list.innerHTML = body
  setMore(response.headers.get("x-mailroom-next"))
  localTimes(list)
}

more?.addEventListener("click", async () => {
  const params = new URLSearchParams({ cursor: more.dataset.next || "" })
  if (query() !== "") params.set("q", query())
  const response = await fetch(base + "rows?" + params, { headers: own })
  if (!response.ok) return
  const holder = document.createElement("ol")
  holder.innerHTML = await response.text()
  localTimes(holder)
  list.append(...holder.querySelectorAll("li[data-id]"))
  setMore(response.headers.get("x-mailroom-next"))
})

if (list && live) {
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
}

let typing
search?.addEventListener("input", () => {
  clearTimeout(typing)
  typing = setTimeout(() => {
    const at = currentId() ? messageHref(currentId()) : base
    history.replaceState(history.state, "", withQuery(at))
    refresh()
  }, 150)
})

// The open message: its tabs, the widths of its preview, its remote images, kept from one to the next.
let lastTab = "tab-html"
let lastWidth = "both"
const setupMessage = () => {
  const article = view?.querySelector("article.message")
  if (!article) return
  document.title = article.dataset.title
  localTimes(article)
  article.classList.add("tabbed")
  const tabs = [...article.querySelectorAll(".tabs [data-tab]")]
  const show = (id) => {
    for (const tab of tabs) {
      const on = tab.dataset.tab === id
      tab.setAttribute("aria-selected", String(on))
      article.querySelector("#" + tab.dataset.tab).hidden = !on
    }
  }
  for (const tab of tabs) {
    tab.addEventListener("click", (event) => {
      event.preventDefault()
      lastTab = tab.dataset.tab
      show(lastTab)
    })
  }
  show(article.querySelector("#" + lastTab) ? lastTab : "tab-html")
  const previews = article.querySelector(".previews")
  const widths = [...article.querySelectorAll("[data-width]")].filter((b) => b.tagName === "BUTTON")
  const setWidth = (width) => {
    lastWidth = width
    if (previews) previews.dataset.width = width
    for (const button of widths) button.setAttribute("aria-pressed", String(button.dataset.width === width))
  }
  for (const button of widths) button.addEventListener("click", () => setWidth(button.dataset.width))
  setWidth(lastWidth)
  const images = article.querySelector("#remote-images")
  images?.addEventListener("click", () => {
    const on = images.getAttribute("aria-pressed") !== "true"
    images.setAttribute("aria-pressed", String(on))
    images.textContent = on ? "Block remote images" : "Load remote images"
    for (const frame of article.querySelectorAll(".previews iframe")) {
      frame.src = messageHref(article.dataset.id) + "/html" + (on ? "?images=remote" : "")
    }
  })
}
setupMessage()

const select = (id) => {
  for (const item of list ? list.querySelectorAll("li[data-id]") : []) {
    const on = item.dataset.id === id
    item.classList.toggle("selected", on)
    if (on) {
      item.classList.replace("unread", "read")
      item.scrollIntoView({ block: "nearest" })
    }
  }
}

const open = async (id, push = true) => {
  openId = id
  select(id)
  const response = await fetch(messageHref(id) + "?fragment=1", { headers: own })
  if (!response.ok) return location.assign(messageHref(id))
  const body = await response.text()
  // Another message was asked for meanwhile: its answer shows.
  if (openId !== id) return
  view.innerHTML = body
  view.scrollTop = 0
  document.body.classList.replace("at-list", "at-message")
  if (push) history.pushState({ id }, "", withQuery(messageHref(id)))
  setupMessage()
  select(id)
}

const toList = (push = true) => {
  if (!view) return
  openId = undefined
  document.body.classList.replace("at-message", "at-list")
  view.innerHTML = placeholder
  document.title = "Outbox · mailroom"
  select(undefined)
  if (push) history.pushState({}, "", withQuery(base))
}

list?.addEventListener("click", (event) => {
  const link = event.target.closest("li[data-id] a")
  if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  event.preventDefault()
  open(link.closest("li").dataset.id)
})
view?.addEventListener("click", (event) => {
  const back = event.target.closest(".back a")
  if (!back || event.button !== 0) return
  event.preventDefault()
  toList()
})
window.addEventListener("popstate", () => {
  const match = /\\/messages\\/([^/?#]+)$/.exec(location.pathname)
  if (match) open(decodeURIComponent(match[1]), false)
  else toList(false)
})

const setRead = async (read) => {
  const id = currentId()
  const button = view?.querySelector("button[data-toggle-read]")
  if (!id || !button) return
  const response = await fetch(base + "api/messages/" + encodeURIComponent(id), {
    method: "PATCH",
    headers: { ...own, "content-type": "application/json" },
    body: JSON.stringify({ read })
  })
  if (!response.ok) return
  button.dataset.toggleRead = read ? "unread" : "read"
  button.textContent = read ? "Mark unread" : "Mark read"
  const item = list?.querySelector('li[data-id="' + CSS.escape(id) + '"]')
  item?.classList.toggle("read", read)
  item?.classList.toggle("unread", !read)
}

document.addEventListener("click", async (event) => {
  const toggle = event.target.closest("button[data-toggle-read]")
  if (toggle) return setRead(toggle.dataset.toggleRead === "read")
  const button = event.target.closest("button[data-delete]")
  if (!button) return
  if (!confirm(button.dataset.confirm)) return
  button.disabled = true
  const response = await fetch(button.dataset.delete, { method: "DELETE", headers: own })
  if (response.ok) location.assign(button.dataset.then)
  else {
    button.disabled = false
    alert("The viewer answered " + response.status + ": nothing was deleted.")
  }
})

// Keys, as a mail client has them; none while typing in the search box.
const move = (step) => {
  const items = list ? [...list.querySelectorAll("li[data-id]")] : []
  if (items.length === 0) return
  const at = items.findIndex((item) => item.dataset.id === currentId())
  const next = items[at === -1 ? 0 : Math.min(items.length - 1, Math.max(0, at + step))]
  if (next && next.dataset.id !== currentId()) open(next.dataset.id)
}
document.addEventListener("keydown", (event) => {
  if (event.metaKey || event.ctrlKey || event.altKey) return
  if (event.target.closest("input, textarea, select")) {
    if (event.key === "Escape") event.target.blur()
    return
  }
  const keys = {
    j: () => move(1),
    ArrowDown: () => move(1),
    k: () => move(-1),
    ArrowUp: () => move(-1),
    "/": () => search?.focus(),
    u: () => view?.querySelector("button[data-toggle-read]")?.click(),
    Delete: () => view?.querySelector("button.danger[data-delete]")?.click(),
    Escape: () => toList()
  }
  const action = keys[event.key]
  if (!action) return
  event.preventDefault()
  action()
})
`
