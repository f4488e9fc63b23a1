// A caller without a valid key, against the built `mailroom` process: its credential is checked
// before its body is read, so a body it never finishes costs the server no wait and no buffer.
import { existsSync } from "node:fs"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { bin, run } from "./process.js"

describe("an unauthenticated request whose body never ends", () => {
  let dir: string
  let server: ReturnType<typeof run>
  let url: string
  beforeAll(async () => {
    assert.isTrue(existsSync(bin), `${bin} is missing: the test command builds the packages first`)
    dir = await mkdtemp(join(tmpdir(), "mailroom-unauthenticated-"))
    const config = {
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
      storage: { kind: "local", dir: "storage", signingSecret: "test-secret" },
      provider: { kind: "outbox", dir: "outbox" }
    }
    await writeFile(join(dir, "config.json"), JSON.stringify(config))
    server = run(join(dir, "config.json"))
    url = await server.listening
  })
  afterAll(async () => {
    server?.child.kill("SIGTERM")
    await server?.exited
    await rm(dir, { recursive: true, force: true })
  })

  it("is answered 401 {message} at once, the body still unfinished", async () => {
    for (const headers of [{ "x-api-key": "mr_unknown_key" }, { authorization: "Bearer mr_test_acme" }]) {
      const path = "x-api-key" in headers ? "/emails" : "/v1/attachments/presign"
      const outgoing = request(`${url}${path}`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", "content-length": "100000" },
        agent: false
      })
      const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
        outgoing.once("response", (response) => {
          const chunks: Array<Buffer> = []
          response.on("data", (chunk: Buffer) => chunks.push(chunk))
          response.once("end", () =>
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") })
          )
        })
        outgoing.on("error", reject)
        setTimeout(() => reject(new Error(`no answer to ${path} within 2 s of its unfinished body`)), 2000).unref()
      })
      outgoing.write('{"from":"billing@acme.example","to":')
      try {
        assert.deepStrictEqual(await answer, {
          status: 401,
          body: JSON.stringify({ message: "missing, invalid or revoked credential" })
        })
      } finally {
        outgoing.destroy()
      }
    }
  })
})
