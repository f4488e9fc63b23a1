// How the viewer answers: the security headers every response carries, the policies of its pages and
// of a message's own HTML, and the download name of a file.
import type { ServerResponse } from "node:http"
import * as Adapter from "@mailroom/core/adapter"

export const pageCsp =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

/**
 * The message's own HTML: no script, no network (images only inline), and an opaque origin even when
 * opened outside the viewer's sandboxed iframe. `remoteImages` lets its images (and only them) load
 * over http(s), when the reader asks for them.
 */
export const messageCsp = (remoteImages: boolean) =>
  `default-src 'none'; img-src data:${remoteImages ? " https: http:" : ""}; style-src 'unsafe-inline'; font-src data:; frame-ancestors 'self'; sandbox`

/**
 * Every viewer response, whatever it is (a page, a fragment, JSON, a redirect, the live feed, a file),
 * is written with these: nothing it holds runs, loads or is framed unless a route grants it (a page's
 * own policy, the message's HTML framed by the viewer).
 */
export const common = {
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'; sandbox",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "cross-origin-resource-policy": "same-origin"
}

export const send = (
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  headers: Record<string, string> = {}
) => {
  res.writeHead(status, { ...common, "content-type": type, "content-length": Buffer.byteLength(body), ...headers })
  res.end(body)
}

export const page = (res: ServerResponse, body: string, status = 200) =>
  send(res, status, "text/html; charset=utf-8", body, { "content-security-policy": pageCsp })

/** A fragment of a page the viewer's script puts in place. */
export const fragment = (res: ServerResponse, body: string, headers: Record<string, string> = {}) =>
  send(res, 200, "text/html; charset=utf-8", body, headers)

export const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  send(res, status, "application/json", JSON.stringify(body), headers)

/** `filename*` (RFC 6266) for any name, with an ASCII fallback for old clients. */
/** The stores' own `Content-Disposition` (core's), so a download is named alike from the viewer and the store. */
export const disposition = Adapter.contentDisposition

export const mediaType = (value: string) => (/^[\w.+-]+\/[\w.+-]+$/.test(value) ? value : "application/octet-stream")
