// Requests no client should send: methods the store routes do not serve, bodies nested a million
// levels deep, or naming 60,000 unknown fields. Each gets a small JSON answer at a small cost.
import { request } from "node:http"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { keys, makeWorld, type Running, transports, type World } from "./world.js"

/** A request through node:http, which, unlike fetch, sends any method (TRACE included). */
const raw = (url: string, method: string, path: string) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: unknown }>(
    (resolve, reject) => {
      const req = request(`${url}${path}`, { method }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: JSON.parse(Buffer.concat(chunks).toString("utf8"))
          })
        )
      })
      req.on("error", reject)
      req.end()
    }
  )

for (const [transport, start] of Object.entries(transports)) {
  describe(transport, () => {
    let world: World
    let server: Running
    beforeAll(async () => {
      world = makeWorld()
      server = await start(world)
    })
    afterAll(() => server.close())

    const post = async (path: string, headers: Record<string, string>, body: string) => {
      const response = await fetch(`${server.url}${path}`, {
        method: path === "/v1/attachments" ? "DELETE" : "POST",
        headers: { "content-type": "application/json", ...headers },
        body
      })
      const text = await response.text()
      return { status: response.status, text, body: JSON.parse(text) as Record<string, unknown> }
    }
    const apiKey = { "x-api-key": keys.acme }

    // A Web Request cannot carry TRACE or CONNECT, so only the Node handler ever sees them.
    const methods = transport === "Node handler" ? ["TRACE", "PATCH", "DELETE", "PROPFIND"] : ["PATCH", "DELETE"]
    it(`store routes answer ${methods.join(", ")} with 405 {message} and Allow`, async () => {
      for (const method of methods) {
        const answer = await raw(server.url, method, "/_store/attachments/org_acme/1-a.pdf?expires=1&signature=x")
        assert.strictEqual(answer.status, 405, method)
        assert.strictEqual(answer.headers.allow, "GET, PUT")
        assert.match(String(answer.headers["content-type"]), /^application\/json/)
        assert.deepStrictEqual(answer.body, { message: `use GET, PUT with a signed URL, not ${method}` })
      }
      assert.deepStrictEqual(world.control.logged, [])
    })

    it("a body nested deeper than 32 levels is a 400 in the operation's shape, before it is parsed", async () => {
      const deep = `${"[".repeat(500_000)}${"]".repeat(500_000)}`
      assert.deepStrictEqual(await post("/emails", apiKey, deep), {
        status: 400,
        text: JSON.stringify({ errors: ["request: the body nests arrays and objects deeper than 32 levels"] }),
        body: { errors: ["request: the body nests arrays and objects deeper than 32 levels"] }
      })
      const v1 = await post("/v1/attachments", { authorization: `Bearer ${keys.acmeToken}` }, `{"a":${deep}}`)
      assert.deepStrictEqual(
        [v1.status, v1.body],
        [400, { message: "the body nests arrays and objects deeper than 32 levels" }]
      )
      // 33 levels is one too many; 32 is decoded (and refused for what it says, not for its depth).
      const nested = (levels: number) => `{"subject":"x","to":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`
      assert.include((await post("/emails", apiKey, nested(33))).text, "deeper than 32 levels")
      assert.notInclude((await post("/emails", apiKey, nested(32))).text, "deeper than 32 levels")
    })

    it("brackets and escaped quotes inside strings do not count as nesting", async () => {
      const subject = `\\"${"[{".repeat(40)}`
      const answer = await post(
        "/emails",
        apiKey,
        `{"from":"a@acme.example","to":["b@example.com"],"subject":"${subject}","body":{"text":"x"}}`
      )
      assert.strictEqual(answer.status, 201, answer.text)
      assert.strictEqual(answer.body.subject, `"${"[{".repeat(40)}`)
    })

    it("60,000 unknown fields or 300,000 wrong recipients are one problem each, not one per field", async () => {
      const fields = Array.from({ length: 60_000 }, (_, i) => `"f${i}":1`).join(",")
      const answer = await post("/emails", apiKey, `{${fields}}`)
      assert.deepStrictEqual(
        [answer.status, answer.body],
        [400, { errors: ["request: has 60000 fields, more than any object of the API"] }]
      )
      const wide = `{"from":"a@acme.example","subject":"x","body":{"text":"x"},"to":[${"[],".repeat(300_000)}[]]}`
      const recipients = await post("/emails", apiKey, wide)
      assert.deepStrictEqual(
        [recipients.status, recipients.body],
        [400, { errors: ["to: must contain at most 1000 items"] }]
      )
    })

    it("an answer lists the first 20 problems and counts the rest", async () => {
      const to = Array.from({ length: 50 }, (_, i) => `not-an-address-${i}`)
      const answer = await post(
        "/emails",
        apiKey,
        JSON.stringify({ from: "a@acme.example", to, subject: "x", body: { text: "x" } })
      )
      assert.strictEqual(answer.status, 400)
      assert.deepStrictEqual(answer.body.errors, [
        ...to.slice(0, 20).map((_, i) => `to[${i}]: must be a valid email address`),
        "request: and 30 more problems"
      ])
      const v1 = await post(
        "/v1/attachments/presign",
        { authorization: `Bearer ${keys.acmeToken}` },
        JSON.stringify(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, 1])))
      )
      assert.strictEqual(v1.status, 400)
      // 30 unknown fields and filename missing: 20 listed, 11 counted.
      assert.match(String(v1.body.message), /^(?:[^;]+; ){20}request: and 11 more problems$/)
    })
  })
}
