// `npm run quickstart`: the whole flow against a running server (`npm start` in another terminal):
// presign, PUT a file, send it as an attachment, download it back, delete it.
const base = process.env.MAILROOM_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`
const apiKey = process.env.MAILROOM_API_KEY ?? "mr_test_acme"
const from = process.env.MAILROOM_FROM ?? "hello@acme.mailroom.test"

/** Stops with what to do, for a server that does not answer: no stack of a failed fetch. */
const unreachable = (cause: unknown): never => {
  const code = (cause as { cause?: { code?: unknown } })?.cause?.code
  console.error(
    `No mailroom server answers at ${base}${typeof code === "string" ? ` (${code})` : ""}: start the server first with npm start, in another terminal (or set MAILROOM_URL to where yours listens).`
  )
  process.exit(1)
}

const call = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { "x-api-key": apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  }).catch(unreachable)
  const json = (await response.json()) as Record<string, unknown>
  console.log(`${method} ${path} -> ${response.status}`, JSON.stringify(json))
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}`)
  return json
}

const content = `Hello from mailroom at ${new Date().toISOString()}\n`
const presigned = (await call("POST", "/attachments/presign", {
  filename: "hello.txt",
  content_type: "text/plain"
})) as {
  url: string
  key: string
}
const put = await fetch(presigned.url, { method: "PUT", headers: { "content-type": "text/plain" }, body: content })
console.log(`PUT <upload url> -> ${put.status}`)
if (!put.ok) throw new Error(`upload answered ${put.status}: ${await put.text()}`)

const sent = await call("POST", "/emails", {
  from,
  from_name: "Mailroom Quick Start",
  to: ["alice@example.com"],
  subject: "Hello from mailroom ✉",
  body: { text: "The attachment says hello.", html: "<p>The attachment says <b>hello</b>.</p>" },
  attachments: [{ filename: "hello.txt", key: presigned.key }]
})

const query = `?key=${encodeURIComponent(presigned.key)}`
const { download_url } = (await call("GET", `/attachments/download${query}`)) as { download_url: string }
const downloaded = await (await fetch(download_url)).text()
console.log(`GET <download url> -> ${downloaded === content ? "the same bytes" : "DIFFERENT bytes"}`)
if (downloaded !== content) process.exit(1)

await call("DELETE", `/attachments/delete${query}`)
const gone = await fetch(`${base}/attachments/download${query}`, { headers: { "x-api-key": apiKey } })
console.log(`GET /attachments/download after delete -> ${gone.status}`)
console.log(
  `\nDone. The message ${sent.message_id} was written to the outbox as ${sent.message_id}.eml (.mailroom/outbox with the example config).`
)
// The viewer answers 404 where it is not served (another provider, a server beyond loopback without its token).
const viewer = `${base}/_mailroom/outbox/messages/${encodeURIComponent(String(sent.message_id))}`
const shown = await fetch(viewer).then(
  (response) => response.ok,
  () => false
)
console.log(
  shown
    ? `See it in your browser: ${viewer}`
    : "The outbox viewer is not served here (see the viewer section of packages/server/README.md)."
)
