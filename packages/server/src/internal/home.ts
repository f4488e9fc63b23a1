// `GET /`: where a browser or a curl lands first. A small page (or JSON, for a client that asks for
// JSON) pointing to the outbox viewer, the OpenAPI document and the docs, instead of a 404.
import type { IncomingMessage, ServerResponse } from "node:http"

/** The server's README, where every route and setting is described. */
export const docsUrl = "https://github.com/mailroom-dev/mailroom/tree/main/packages/server#readme"

export interface Links {
  /** The viewer's URL when it is served to this client's listener, else undefined. */
  readonly viewer: string | undefined
  readonly publicUrl: string
}

/** JSON when the client asks for it and not for HTML (`Accept: application/json`), else the page. */
const wantsJson = (accept: string | undefined) =>
  accept !== undefined && /application\/json/i.test(accept) && !/text\/html/i.test(accept)

const page = (links: Links) => {
  // Relative links, so they hold behind a proxy that serves the API under a path.
  const viewer =
    links.viewer === undefined
      ? ""
      : `<li><a href="_mailroom/outbox/">The outbox viewer</a>: every message this server sent, live</li>`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>mailroom</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .25em}</style>
</head><body>
<h1>mailroom</h1>
<p>This server answers the mailroom API: <code>POST /emails</code>, <code>POST /attachments/presign</code> and the rest, with an <code>x-api-key</code> header (or <code>Authorization: Bearer</code> under <code>/v1</code>).</p>
<ul>
${viewer}<li><a href="openapi.json">openapi.json</a>: the API as an OpenAPI 3.1 document</li>
<li><a href="${docsUrl}">The docs</a>: the config file, the routes, operations</li>
<li><a href="readyz">readyz</a>: whether what a send needs answers</li>
</ul>
</body></html>
`
}

/** Answers `GET /` (and `HEAD /`) with the page or its JSON. */
export const answer = (req: IncomingMessage, res: ServerResponse, links: Links) => {
  const json = wantsJson(req.headers.accept)
  const body = json
    ? JSON.stringify({
        name: "mailroom",
        openapi: `${links.publicUrl}/openapi.json`,
        ...(links.viewer === undefined ? {} : { viewer: links.viewer }),
        docs: docsUrl,
        readiness: `${links.publicUrl}/readyz`
      })
    : page(links)
  res.writeHead(200, {
    "content-type": json ? "application/json; charset=utf-8" : "text/html; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    vary: "accept",
    "cache-control": "no-cache",
    ...(json ? {} : { "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'" })
  })
  res.end(body)
}
