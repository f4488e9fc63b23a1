// The Fastify app with mailroom's plugin under /mail (and at the root): the whole flow through the
// signed URLs, mailroom's own error shapes, the app's routes keeping Fastify's parser, and a layer
// that cannot be built failing the app's start-up with the setting named.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Mailroom, Organizations } from "@mailroom/core"
import { MailroomFastify } from "@mailroom/http/fastify"
import { DiskObjectStore, OutboxEmailProvider } from "@mailroom/local"
import { freePort, mountedFlow, mountedFlowFile, type TempDir, tempDir } from "@mailroom/test-support"
import Fastify, { type FastifyInstance } from "fastify"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { makeApp } from "../server.js"

const headers = { "x-api-key": "mr_test_app", "content-type": "application/json" }

for (const prefix of ["/mail", ""]) {
  describe(`registered with prefix "${prefix}"`, () => {
    let dir: TempDir
    let app: FastifyInstance
    let url = ""
    beforeAll(async () => {
      dir = await tempDir("fastify")
      // publicUrl is read when the plugin is registered, before the app listens: the port is chosen first.
      const port = await freePort()
      app = await makeApp({ dir: dir.path, publicUrl: `http://127.0.0.1:${port}`, prefix })
      url = await app.listen({ port, host: "127.0.0.1" })
    })
    afterAll(async () => {
      await app.close()
      await dir.remove()
    })

    it("serves the whole flow through the signed URLs, beside the app's JSON routes", async () => {
      assert.deepStrictEqual(await (await fetch(`${url}/health`)).json(), { ok: true })
      const echo = await fetch(`${url}/echo`, { method: "POST", headers, body: JSON.stringify({ a: 1 }) })
      assert.deepStrictEqual(await echo.json(), { received: { a: 1 } }, "the app's routes keep Fastify's parser")

      const base = `${url}${prefix}`
      const flow = await mountedFlow({ base, apiKey: "mr_test_app", from: "reports@app.example" })
      assert.isTrue(flow.uploadUrl.startsWith(`${base}/_mailroom/storage/`), flow.uploadUrl)
      const eml = readFileSync(join(dir.path, "outbox", `${flow.messageId}.eml`), "utf8")
      assert.match(eml, /filename="?report\.csv"?/)
      assert.include(eml, Buffer.from(mountedFlowFile).toString("base64"))
    })

    it("answers in mailroom's own error shapes, not Fastify's", async () => {
      const base = `${url}${prefix}`
      const invalid = await fetch(`${base}/emails`, { method: "POST", headers, body: "{nope" })
      assert.deepStrictEqual(
        [invalid.status, await invalid.json()],
        [400, { errors: ["request: the body is not valid JSON"] }]
      )
      const form = await fetch(`${base}/emails`, {
        method: "POST",
        headers: { ...headers, "content-type": "text/plain" },
        body: "x"
      })
      assert.deepStrictEqual(
        [form.status, await form.json()],
        [415, { error: "Content-Type must be application/json" }]
      )
      const unknown = await fetch(`${base}/nope`)
      assert.deepStrictEqual(
        [unknown.status, await unknown.json()],
        [404, { message: `no route for GET ${prefix}/nope` }]
      )
    })
  })
}

it("a layer that cannot be built fails the app's start-up, naming the setting", async () => {
  const app = Fastify()
  app.register(MailroomFastify.plugin, {
    prefix: "/mail",
    layer: Mailroom.layer({
      provider: OutboxEmailProvider.layer({ dir: "/tmp/unused-outbox" }),
      store: DiskObjectStore.layer({ dir: "/tmp/unused", publicUrl: "ftp://nope", signingSecret: "s" }),
      organizations: Organizations.single({ domains: ["app.example"] })
    })
  })
  try {
    const started = await app.ready().then(
      () => "started",
      (error: Error) => error.message
    )
    assert.match(started, /^mailroom could not start: [\s\S]*\["publicUrl"\]/)
  } finally {
    await app.close().catch(() => undefined)
  }
})
