// Who may reach the outbox viewer: it shows every organisation's mail, so it is served only on a loopback
// listener (to a loopback Host, against DNS rebinding) or to holders of the admin token; everyone else
// gets the API's 404. Organisation credentials are never looked at.
import { randomBytes } from "node:crypto"
import type { IncomingMessage } from "node:http"
import * as Adapter from "@mailroom/core/adapter"
import { tokenMatcher } from "../secrets.js"

export const tokenHeader = "x-mailroom-viewer-token"
/** Set by the viewer's own script on every change: a page of another origin cannot send it without CORS. */
export const csrfHeader = "x-mailroom-viewer"
const cookieName = "mailroom_viewer"

const isLoopbackHost = (host: string) =>
  host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host)

const cookies = (req: IncomingMessage) =>
  new Map(
    (req.headers.cookie ?? "")
      .split(";")
      .map((pair) => pair.trim().split("="))
      .filter((pair): pair is [string, string] => pair.length === 2)
  )

/** The Host header without its port. */
const hostName = (req: IncomingMessage) => {
  const host = req.headers.host ?? ""
  return host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d+$/, "")
}

export type Decision =
  | { readonly kind: "allowed" }
  | { readonly kind: "hidden" }
  /** A valid `?token=`: the cookie is set and the token leaves the address bar. */
  | { readonly kind: "signIn"; readonly location: string; readonly cookie: string }

export interface Options {
  readonly enabled: boolean
  readonly token: string | undefined
  /** The interface the server listens on. */
  readonly host: string
  readonly secure: boolean
}

export const make = (options: Options) => {
  // The config refuses a malformed `sha256:` token at start-up; one that reaches here anyway matches nothing.
  const matches = options.token === undefined ? undefined : tokenMatcher(options.token, "viewer.token")
  // One per process: a restart signs everyone out, and the cookie never holds the token itself.
  const session = randomBytes(32).toString("base64url")
  const loopbackOnly = matches === undefined
  const served = options.enabled && (!loopbackOnly || isLoopbackHost(options.host))
  const notServed = !options.enabled
    ? "viewer.enabled is false"
    : `the server listens on ${options.host}, beyond loopback, and viewer.token is not set`

  const decide = (req: IncomingMessage, url: URL): Decision => {
    if (!served) return { kind: "hidden" }
    if (matches === undefined) return isLoopbackHost(hostName(req)) ? { kind: "allowed" } : { kind: "hidden" }
    const header = req.headers[tokenHeader]
    if (matches(Array.isArray(header) ? header[0] : header)) return { kind: "allowed" }
    const cookie = cookies(req).get(cookieName)
    if (cookie !== undefined && Adapter.constantTimeEqual(Buffer.from(cookie), Buffer.from(session)))
      return { kind: "allowed" }
    const query = url.searchParams.get("token")
    if (req.method === "GET" && query !== null && matches(query)) {
      url.searchParams.delete("token")
      return {
        kind: "signIn",
        location: `${url.pathname}${url.search}`,
        cookie: `${cookieName}=${session}; Path=/_mailroom/outbox; HttpOnly; SameSite=Lax${options.secure ? "; Secure" : ""}`
      }
    }
    return { kind: "hidden" }
  }

  /** A change (delete) must come from the viewer's own script on the viewer's own origin. */
  const sameOrigin = (req: IncomingMessage) => {
    if (req.headers[csrfHeader] !== "1") return false
    const site = req.headers["sec-fetch-site"]
    if (site !== undefined && site !== "same-origin") return false
    const origin = req.headers.origin
    return origin === undefined || origin === `http://${req.headers.host}` || origin === `https://${req.headers.host}`
  }

  return { served, notServed, decide, sameOrigin }
}

/** The access rule of a viewer: whether it is served, and who may see it. */
export type Access = ReturnType<typeof make>

/** The rule's options from the viewer's: `secure` when browsers reach it over https. */
export const optionsOf = (viewer: {
  readonly enabled: boolean
  readonly token: string | undefined
  readonly host: string
  readonly publicUrl: string
}): Options => ({
  enabled: viewer.enabled,
  token: viewer.token,
  host: viewer.host,
  secure: viewer.publicUrl.startsWith("https:")
})
