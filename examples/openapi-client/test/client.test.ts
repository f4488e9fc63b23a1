// A client generated from a running server's GET /openapi.json: it must be the committed api.d.ts,
// type-check under the project's strict tsconfig, and carry a whole flow against that server.
import { spawnSync } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Server, ServerConfig } from "@mailroom/server"
import { simpleParser } from "mailparser"
import openapiTS, { astToString } from "openapi-typescript"
import { afterAll, assert, beforeAll, it } from "vitest"
import { deleteById, makeClient, refusedSend, sendWithAttachment } from "../client.js"

const example = fileURLToPath(new URL("..", import.meta.url))
const root = join(example, "..", "..")

let dir: string
let server: Server.RunningServer
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mailroom-openapi-client-"))
  const config = ServerConfig.parse(
    {
      port: 0,
      serviceDomain: "mailroom.test",
      organizations: [
        {
          id: "org_acme",
          slug: "acme",
          verifiedDomains: ["acme.example"],
          apiKeys: ["mr_test_acme"],
          accessTokens: ["tok_acme"]
        }
      ],
      storage: { kind: "local", dir: "storage", signingSecret: "client-secret" },
      provider: { kind: "outbox", dir: "outbox" }
    },
    { baseDir: dir, source: "test config" }
  )
  server = await Server.start(config, { log: () => {} })
})
afterAll(async () => {
  await server?.close()
  await rm(dir, { recursive: true, force: true })
})

it("api.d.ts is what openapi-typescript generates from the served document today", async () => {
  const generated = astToString(await openapiTS(new URL(`${server.url}/openapi.json`)))
  const committed = join(example, "api.d.ts")
  // MAILROOM_UPDATE_CLIENT=1 rewrites it after a change to the document.
  if (process.env.MAILROOM_UPDATE_CLIENT === "1") await writeFile(committed, generated)
  assert.strictEqual(
    await readFile(committed, "utf8"),
    generated,
    "api.d.ts is stale: run with MAILROOM_UPDATE_CLIENT=1"
  )
})

it("the generated client type-checks under the project's strict tsconfig", () => {
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc")
  const result = spawnSync(process.execPath, [tsc, "-p", join(example, "tsconfig.json")], { encoding: "utf8" })
  assert.strictEqual(result.status, 0, `${result.stdout}${result.stderr}`)
})

it("carries the whole flow: presign, upload, send, download, refusal, delete by id", async () => {
  const client = makeClient(server.url)
  const bytes = new TextEncoder().encode("%PDF-1.7 invoice")
  const flow = await sendWithAttachment(client, "mr_test_acme", { name: "invoice.pdf", type: "application/pdf", bytes })
  assert.strictEqual(flow.presigned.expires_in, 3600)
  assert.isAbove(flow.uploadBy.getTime(), Date.now())
  assert.deepStrictEqual(flow.sent.attachments, [flow.presigned.key])
  const downloaded = await fetch(flow.download.download_url)
  assert.deepStrictEqual(new Uint8Array(await downloaded.arrayBuffer()), bytes)
  const eml = await readFile(join(dir, "outbox", `${flow.sent.message_id}.eml`))
  const parsed = await simpleParser(eml)
  assert.strictEqual(parsed.subject, "Your invoice")
  assert.strictEqual(parsed.attachments[0]?.filename, "invoice.pdf")

  assert.deepStrictEqual(await refusedSend(client, "mr_test_acme"), {
    status: 400,
    errors: ["to: must contain at least 1 recipient"]
  })
  assert.deepStrictEqual(await deleteById(client, "tok_acme", flow.presigned.attachment_id), {
    status: 200,
    deleted: true,
    message: undefined
  })
  const again = await deleteById(client, "tok_acme", flow.presigned.attachment_id)
  assert.strictEqual(again.status, 404)
  assert.isString(again.message)
})
