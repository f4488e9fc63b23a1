// The outbox viewer as the server holds it from the start: its access rule now, its ~20 modules (pages,
// assets, the inbox API and index) loaded with the first request that is the viewer's to answer.
// A start that serves no viewer page never loads them: about a tenth of the modules of a cold start.
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Access from "./access.js"
import { base } from "./pages.js"
import type { Options, Viewer } from "./viewer.js"

/**
 * As viewer.js's `start`, without loading it. Until it is loaded, nobody has read the outbox's index,
 * so there is nothing to note: the index compares the directory with itself when it is first opened.
 */
export const start = (options: Options): Viewer => {
  const access = Access.make(Access.optionsOf(options))
  let loaded: Viewer | undefined
  let loading: Promise<Viewer> | undefined
  const load = () => {
    loading ??= import("./viewer.js").then(async (module) => {
      loaded = await module.start({ ...options, access })
      return loaded
    })
    return loading
  }
  const handle = (req: IncomingMessage, res: ServerResponse): Promise<void> | undefined => {
    if (loaded !== undefined) return loaded.handle(req, res)
    const url = new URL(req.url ?? "/", "http://viewer.invalid")
    if (!access.served || !(url.pathname === base.slice(0, -1) || url.pathname.startsWith(base))) return undefined
    // Decided here as the viewer decides (the same rule, the same session): a hidden request stays the API's.
    if (access.decide(req, url).kind === "hidden") return undefined
    return load().then(
      (viewer) => viewer.handle(req, res),
      (cause: unknown) => {
        ;(options.logError ?? console.error)(`[mailroom] the outbox viewer could not be loaded\n${String(cause)}`)
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" })
        res.end(JSON.stringify({ message: "the viewer failed; the cause is in the server's log" }))
      }
    )
  }
  return {
    url: access.served ? `${options.publicUrl}${base}` : undefined,
    notServed: access.notServed,
    handle,
    noteWritten: (id) => loaded?.noteWritten(id),
    close: async () => {
      if (loading !== undefined) await (await loading).close()
    }
  }
}
