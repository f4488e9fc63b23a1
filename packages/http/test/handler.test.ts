import { connect } from "node:net"
import { ProviderError } from "@mailroom/core"
import { Duration } from "effect"
import { afterAll, assert, beforeAll, beforeEach, describe, it } from "vitest"
import { MailroomHandler } from "../src/index.js"
import { keys, makeWorld, type Running, transports, type World } from "./world.js"

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
  readonly text: string
}

const message = {
  from: "billing@acme.example",
  from_name: "Acme Billing",
  to: ["alice@example.com"],
  subject: "Your invoice",
  body: { text: "See attached.", html: "<p>See attached.</p>" }
}

for (const [transport, start] of Object.entries(transports)) {
  describe(`${transport}`, () => {
    let world: World
    let server: Running
    beforeAll(async () => {
      world = makeWorld()
      server = await start(world)
    })
    afterAll(() => server.close())
    beforeEach(() => {
      world.control.failures.length = 0
      world.control.storeBroken = false
      world.control.organizationsDown = false
      world.control.logged.length = 0
    })

    const call = async (
      method: string,
      path: string,
      init: { headers?: Record<string, string>; body?: unknown; raw?: string } = {}
    ) => {
      const headers = { ...(init.body !== undefined ? { "content-type": "application/json" } : {}), ...init.headers }
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers,
        ...(init.raw !== undefined
          ? { body: init.raw }
          : init.body !== undefined
            ? { body: JSON.stringify(init.body) }
            : {})
      })
      const text = await response.text()
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        body = undefined
      }
      return { status: response.status, headers: response.headers, body, text } satisfies Answer
    }
    const apiKey = (key = keys.acme) => ({ "x-api-key": key })
    const bearer = (token = keys.acmeToken) => ({ authorization: `Bearer ${token}` })
    const expectJson = (answer: Answer, status: number, body: unknown) => {
      assert.strictEqual(answer.status, status, answer.text)
      assert.match(answer.headers.get("content-type") ?? "", /^application\/json/)
      assert.deepStrictEqual(answer.body, body)
    }
    const presignAndUpload = async (
      headers: Record<string, string>,
      path = "/attachments/presign",
      content = "%PDF-1.7"
    ) => {
      const presigned = await call("POST", path, {
        headers,
        body: { filename: "invoice.pdf", content_type: "application/pdf" }
      })
      assert.strictEqual(presigned.status, 201, presigned.text)
      const body = presigned.body as { url: string; key: string; attachment_id: string; expires_in: number }
      const put = await world.memory.fetch(body.url, {
        method: "PUT",
        headers: { "content-type": "application/pdf" },
        body: content
      })
      assert.strictEqual(put.status, 200)
      return body
    }

    describe("POST /emails", () => {
      it("201 with the spec's body; the provider received the attachment's bytes", async () => {
        const { key } = await presignAndUpload(apiKey())
        const answer = await call("POST", "/emails", {
          headers: apiKey(),
          body: { ...message, attachments: [{ filename: "invoice.pdf", key }] }
        })
        const sent = world.provider.sent.at(-1)
        expectJson(answer, 201, {
          message_id: sent?.messageId,
          from: "billing@acme.example",
          to: ["alice@example.com"],
          subject: "Your invoice",
          attachments: [key]
        })
        assert.strictEqual(new TextDecoder().decode(sent?.email.attachments[0]?.content), "%PDF-1.7")
      })

      it("400 lists every problem as {errors}", async () => {
        const answer = await call("POST", "/emails", {
          headers: apiKey(),
          body: { from: "nope", to: ["a@example.com", "bad"], subject: "Hi", body: {}, replyTo: "x@example.com" }
        })
        expectJson(answer, 400, {
          errors: [
            "replyTo: is not a known field",
            "from: must be a valid email address",
            "to[1]: must be a valid email address",
            "body: must contain html or text"
          ]
        })
      })

      it("400 refuses header injection in every header-bound value", async () => {
        const answer = await call("POST", "/emails", {
          headers: apiKey(),
          body: {
            ...message,
            subject: "Hi\r\nBcc: victim@example.com",
            from_name: "Acme\nX-Evil: 1",
            attachments: [
              {
                filename: "a.pdf\r\nX: y",
                key: "attachments/org_acme/1-a.pdf",
                content_type: "application/pdf\r\nX: y"
              }
            ]
          }
        })
        expectJson(answer, 400, {
          errors: [
            "from_name: must not contain line breaks",
            "subject: must not contain line breaks",
            "attachments[0].filename: must not contain line breaks",
            "attachments[0].content_type: must not contain line breaks"
          ]
        })
        assert.strictEqual(world.provider.sent.filter((s) => s.email.subject.includes("Bcc")).length, 0)
      })

      it("400 for a body that is not JSON, 415 for another content type, 413 over the limit", async () => {
        expectJson(
          await call("POST", "/emails", { headers: { ...apiKey(), "content-type": "application/json" }, raw: "{nope" }),
          400,
          {
            errors: ["request: the body is not valid JSON"]
          }
        )
        expectJson(
          await call("POST", "/emails", { headers: { ...apiKey(), "content-type": "text/plain" }, raw: "{}" }),
          415,
          {
            error: "Content-Type must be application/json"
          }
        )
        const huge = JSON.stringify({ ...message, body: { text: "x".repeat(1024 * 1024) } })
        expectJson(
          await call("POST", "/emails", { headers: { ...apiKey(), "content-type": "application/json" }, raw: huge }),
          413,
          {
            error: "the body is larger than 1048576 bytes"
          }
        )
      })

      it("401 {message} for a missing, unknown or wrong-kind credential, never echoing it", async () => {
        for (const headers of [{}, apiKey("mr_wrong_key_123"), apiKey(keys.acmeToken), bearer(keys.acme)]) {
          const answer = await call("POST", "/emails", { headers, body: message })
          expectJson(answer, 401, { message: "missing, invalid or revoked credential" })
          assert.notInclude(answer.text, "mr_wrong_key_123")
        }
      })

      it("400 naming the attachment for another organisation's key", async () => {
        const { key } = await presignAndUpload(apiKey(keys.globex))
        const answer = await call("POST", "/emails", {
          headers: apiKey(),
          body: { ...message, attachments: [{ filename: "x.pdf", key }] }
        })
        expectJson(answer, 400, { errors: ["attachments[0].key: is not an attachment of this organization"] })
      })

      it("400 for a forbidden extension or a recipient count over the provider's limit", async () => {
        const { key } = await presignAndUpload(apiKey())
        const answer = await call("POST", "/emails", {
          headers: apiKey(),
          body: { ...message, attachments: [{ filename: "run.exe", key }] }
        })
        expectJson(answer, 400, { errors: ["attachments[0].filename: .exe files are not accepted by the provider"] })
      })

      it("a file name is cleaned as presign cleans it, and judged as a mail client shows it", async () => {
        const { key } = await presignAndUpload(apiKey())
        const sent = await call("POST", "/emails", {
          headers: apiKey(),
          body: { ...message, attachments: [{ filename: "../../evil.exe.txt", key }] }
        })
        assert.strictEqual(sent.status, 201, sent.text)
        assert.strictEqual(world.provider.sent.at(-1)?.email.attachments[0]?.filename, "evil.exe.txt")
        const refused = await call("POST", "/emails", {
          headers: apiKey(),
          body: {
            ...message,
            attachments: ["evil.ex\u200be", "evil.\uff45\uff58\uff45", "evil.exe:stream", "evil.exe;.pdf"].map(
              (filename) => ({ filename, key })
            )
          }
        })
        expectJson(refused, 400, {
          errors: [0, 1, 2, 3].map((i) => `attachments[${i}].filename: .exe files are not accepted by the provider`)
        })
      })

      it("422 {error} when the from domain is not verified", async () => {
        const answer = await call("POST", "/emails", {
          headers: apiKey(),
          body: { ...message, from: "a@globex.example" }
        })
        expectJson(answer, 422, {
          error:
            "from: a@globex.example is not on a verified domain of organization org_acme (its verified domains are acme.example, acme.mailroom.test, and their subdomains); nothing was sent"
        })
      })

      it("422 for a sandbox recipient, 503 when paused, 429 with Retry-After", async () => {
        world.control.failures.push(
          new ProviderError.ProviderError({
            provider: "test",
            reason: new ProviderError.RecipientNotVerified({
              message: "alice@example.com is not verified (sandbox)",
              recipients: ["alice@example.com"]
            })
          })
        )
        expectJson(await call("POST", "/emails", { headers: apiKey(), body: message }), 422, {
          error: "alice@example.com is not verified (sandbox)"
        })
        world.control.failures.push(
          new ProviderError.ProviderError({
            provider: "test",
            reason: new ProviderError.SendingPaused({ message: "sending is paused for this account", permanent: false })
          })
        )
        expectJson(await call("POST", "/emails", { headers: apiKey(), body: message }), 503, {
          error: "sending is paused for this account",
          may_have_been_sent: false
        })
        // A provider that may have the message says so in words and in a field a program reads.
        world.control.failures.push(
          new ProviderError.ProviderError({
            provider: "test",
            reason: new ProviderError.Unavailable({ message: "timed out after sending", possiblySent: true })
          })
        )
        expectJson(await call("POST", "/emails", { headers: apiKey(), body: message }), 503, {
          error:
            "the email provider did not confirm the message; it may have been sent, so check before sending it again",
          may_have_been_sent: true
        })
        world.control.failures.push(
          new ProviderError.ProviderError({
            provider: "test",
            reason: new ProviderError.RateLimited({ message: "slow down", retryAfter: Duration.millis(2500) })
          })
        )
        const limited = await call("POST", "/emails", { headers: apiKey(), body: message })
        expectJson(limited, 429, { error: "slow down" })
        assert.strictEqual(limited.headers.get("retry-after"), "3")
      })

      it("500 {error} says nothing internal; the cause goes to the log", async () => {
        world.control.failures.push(
          new ProviderError.ProviderError({
            provider: "test",
            reason: new ProviderError.Unknown({ message: "vendor said: internal host db-7.internal failed" })
          })
        )
        const answer = await call("POST", "/emails", { headers: apiKey(), body: message })
        expectJson(answer, 500, { error: "internal error" })
        assert.strictEqual(world.control.logged.length, 1)
        assert.include(world.control.logged[0], "db-7.internal")
        assert.notInclude(world.control.logged[0], keys.acme)
      })

      it("Idempotency-Key replays the first response, marked; another body is 409", async () => {
        const headers = { ...apiKey(), "idempotency-key": `order-${transport.replace(/\W/g, "")}` }
        const first = await call("POST", "/emails", { headers, body: message })
        const again = await call("POST", "/emails", { headers, body: message })
        assert.strictEqual(first.status, 201)
        assert.isNull(first.headers.get("idempotent-replayed"))
        expectJson(again, 201, first.body)
        assert.strictEqual(again.headers.get("idempotent-replayed"), "true")
        for (const change of [{ subject: "Another" }, { body: { ...message.body, text: "See the attachment." } }]) {
          const other = await call("POST", "/emails", { headers, body: { ...message, ...change } })
          expectJson(other, 409, { error: "this Idempotency-Key was already used with another request" })
        }
        const tooLong = await call("POST", "/emails", {
          headers: { ...apiKey(), "idempotency-key": "k".repeat(257) },
          body: message
        })
        expectJson(tooLong, 400, { errors: ["Idempotency-Key: must be 1 to 256 visible ASCII characters"] })
      })
    })

    describe("base attachment operations (x-api-key)", () => {
      it("presign 201 {url, key, expires_in, attachment_id}; the key is the org's", async () => {
        const answer = await call("POST", "/attachments/presign", {
          headers: apiKey(),
          body: { filename: "../../etc/passwd", content_type: "text/plain", org_id: "org_acme" }
        })
        assert.strictEqual(answer.status, 201)
        const body = answer.body as Record<string, unknown>
        assert.deepStrictEqual(Object.keys(body).sort(), ["attachment_id", "expires_in", "key", "url"])
        assert.match(String(body.key), /^attachments\/org_acme\/[0-9]+_[0-9a-f]{20}-etc_passwd$/)
        assert.strictEqual(body.expires_in, 3600)
        assert.match(String(body.attachment_id), /^att_[0-9a-f]+$/)
      })

      it("presign errors: 400 and 403 {error}, 401 {message}, bad JSON 400 {error}", async () => {
        expectJson(
          await call("POST", "/attachments/presign", { headers: apiKey(), body: { content_type: "application/pdf" } }),
          400,
          {
            error: "filename: is required"
          }
        )
        expectJson(
          await call("POST", "/attachments/presign", {
            headers: apiKey(),
            body: { filename: "a.pdf", org_id: "org_globex" }
          }),
          403,
          { error: "org_id is not the organization of this credential" }
        )
        expectJson(await call("POST", "/attachments/presign", { body: { filename: "a.pdf" } }), 401, {
          message: "missing, invalid or revoked credential"
        })
        expectJson(
          await call("POST", "/attachments/presign", {
            headers: { ...apiKey(), "content-type": "application/json" },
            raw: "["
          }),
          400,
          { error: "the body is not valid JSON" }
        )
      })

      it("download 200 {download_url, expires_in}; the URL serves the bytes", async () => {
        const { key } = await presignAndUpload(apiKey())
        const answer = await call("GET", `/attachments/download?key=${encodeURIComponent(key)}`, { headers: apiKey() })
        assert.strictEqual(answer.status, 200)
        const body = answer.body as { download_url: string; expires_in: number }
        assert.strictEqual(body.expires_in, 3600)
        assert.strictEqual(await (await world.memory.fetch(body.download_url)).text(), "%PDF-1.7")
      })

      it("download and delete of another organisation's key are 404 {message}; the file stays", async () => {
        const { key } = await presignAndUpload(apiKey(keys.globex))
        const q = `?key=${encodeURIComponent(key)}`
        expectJson(await call("GET", `/attachments/download${q}`, { headers: apiKey() }), 404, {
          message: `attachment not found: ${key}`
        })
        expectJson(await call("DELETE", `/attachments/delete${q}`, { headers: apiKey() }), 404, {
          message: `attachment not found: ${key}`
        })
        assert.strictEqual(
          (await call("GET", `/attachments/download${q}`, { headers: apiKey(keys.globex) })).status,
          200
        )
      })

      it("delete 200 {deleted, key}, then 404", async () => {
        const { key } = await presignAndUpload(apiKey())
        const q = `?key=${encodeURIComponent(key)}`
        expectJson(await call("DELETE", `/attachments/delete${q}`, { headers: apiKey() }), 200, { deleted: true, key })
        expectJson(await call("DELETE", `/attachments/delete${q}`, { headers: apiKey() }), 404, {
          message: `attachment not found: ${key}`
        })
      })

      it("a missing, repeated or unknown query parameter is 400 {error}; no credential is 401 {message}", async () => {
        expectJson(await call("GET", "/attachments/download", { headers: apiKey() }), 400, {
          error: "key: is required"
        })
        expectJson(await call("DELETE", "/attachments/delete?key=a&key=b", { headers: apiKey() }), 400, {
          error: "key: must be given once"
        })
        expectJson(await call("GET", "/attachments/download?key=a&x=1", { headers: apiKey() }), 400, {
          error: "x: is not a known query parameter"
        })
        expectJson(await call("GET", "/attachments/download?key=a", {}), 401, {
          message: "missing, invalid or revoked credential"
        })
      })

      it("a store failure is 500 {message} with nothing internal; the cause is logged", async () => {
        world.control.storeBroken = true
        const answer = await call("GET", "/attachments/download?key=attachments/org_acme/1-a.pdf", {
          headers: apiKey()
        })
        expectJson(answer, 500, { message: "internal error" })
        assert.include(world.control.logged.join("\n"), "secret-internal-bucket")
        const presign = await call("POST", "/attachments/presign", { headers: apiKey(), body: { filename: "a.pdf" } })
        expectJson(presign, 500, { message: "internal error" })
      })
    })

    describe("organisations that cannot be reached", () => {
      it("are 503 in each operation's shape, never a 401; nothing is sent, each is logged once as a 503", async () => {
        world.control.organizationsDown = true
        const sent = world.provider.sent.length
        const error = "credentials cannot be checked right now; nothing was done"
        expectJson(await call("POST", "/emails", { headers: apiKey(), body: message }), 503, {
          error,
          may_have_been_sent: false
        })
        expectJson(
          await call("POST", "/attachments/presign", { headers: apiKey(), body: { filename: "a.pdf" } }),
          503,
          {
            error
          }
        )
        expectJson(
          await call("GET", "/attachments/download?key=attachments/org_acme/1-a.pdf", { headers: apiKey() }),
          503,
          {
            error
          }
        )
        expectJson(
          await call("DELETE", "/attachments/delete?key=attachments/org_acme/1-a.pdf", { headers: apiKey() }),
          503,
          {
            error
          }
        )
        expectJson(
          await call("POST", "/v1/attachments/presign", { headers: bearer(), body: { filename: "a.pdf" } }),
          503,
          {
            message: error
          }
        )
        expectJson(
          await call("DELETE", "/v1/attachments", { headers: bearer(), body: { attachment_id: "att_00" } }),
          503,
          {
            message: error
          }
        )
        // A read, a change of a scheduled message, a batch: {error} alone, nothing said of sending.
        expectJson(await call("GET", "/emails", { headers: apiKey() }), 503, { error })
        expectJson(await call("GET", "/suppressions", { headers: apiKey() }), 503, { error })
        expectJson(await call("POST", "/emails/batch", { headers: apiKey(), body: [message] }), 503, { error })
        assert.strictEqual(world.provider.sent.length, sent)
        // Each 503 logs its cause once, as a 503 (no stack of a 500).
        assert.deepStrictEqual(
          world.control.logged.map((line) => line.replace(/ on [A-Z]+ \S+:/, " on <route>:")),
          Array(9).fill(`[mailroom] 503 on <route>: ${error}`)
        )
        // Back up: the same key works again.
        world.control.organizationsDown = false
        assert.strictEqual((await call("POST", "/emails", { headers: apiKey(), body: message })).status, 201)
      })
    })

    describe("v1 attachment operations (Bearer)", () => {
      it("presign 201; download by attachment_id 200; delete by body 200; then 404", async () => {
        const { attachment_id } = await presignAndUpload(bearer(), "/v1/attachments/presign")
        const download = await call("GET", `/v1/attachments/download?attachment_id=${attachment_id}`, {
          headers: bearer()
        })
        assert.strictEqual(download.status, 200)
        assert.strictEqual(
          await (await world.memory.fetch((download.body as { download_url: string }).download_url)).text(),
          "%PDF-1.7"
        )
        expectJson(await call("DELETE", "/v1/attachments", { headers: bearer(), body: { attachment_id } }), 200, {
          deleted: true,
          attachment_id
        })
        expectJson(
          await call("GET", `/v1/attachments/download?attachment_id=${attachment_id}`, { headers: bearer() }),
          404,
          {
            message: `attachment not found: ${attachment_id}`
          }
        )
      })

      it("every v1 error is {message}: 400, 401, 403, 404, bad JSON", async () => {
        expectJson(await call("POST", "/v1/attachments/presign", { headers: bearer(), body: {} }), 400, {
          message: "filename: is required"
        })
        expectJson(await call("POST", "/v1/attachments/presign", { headers: apiKey(), body: { filename: "a" } }), 401, {
          message: "missing, invalid or revoked credential"
        })
        expectJson(
          await call("POST", "/v1/attachments/presign", {
            headers: bearer(),
            body: { filename: "a", org_id: "org_globex" }
          }),
          403,
          { message: "org_id is not the organization of this credential" }
        )
        expectJson(await call("GET", "/v1/attachments/download?attachment_id=nope", { headers: bearer() }), 400, {
          message: "attachment_id: must be att_ followed by 1 to 458 lower-case hexadecimal characters"
        })
        expectJson(
          await call("DELETE", "/v1/attachments", {
            headers: { ...bearer(), "content-type": "application/json" },
            raw: "x"
          }),
          400,
          {
            message: "the body is not valid JSON"
          }
        )
        expectJson(
          await call("DELETE", "/v1/attachments", { headers: { authorization: "Basic abc" }, body: {} }),
          401,
          {
            message: "missing, invalid or revoked credential"
          }
        )
      })

      it("another organisation's attachment_id is 404 on download and delete", async () => {
        const { attachment_id } = await presignAndUpload(bearer(keys.globexToken), "/v1/attachments/presign")
        expectJson(
          await call("GET", `/v1/attachments/download?attachment_id=${attachment_id}`, { headers: bearer() }),
          404,
          {
            message: `attachment not found: ${attachment_id}`
          }
        )
        expectJson(await call("DELETE", "/v1/attachments", { headers: bearer(), body: { attachment_id } }), 404, {
          message: `attachment not found: ${attachment_id}`
        })
      })
    })

    describe("everything else", () => {
      it("an unknown route is 404 {message}; a known path with another method is 405 with Allow", async () => {
        expectJson(await call("GET", "/nope", {}), 404, { message: "no route for GET /nope" })
        const wrong = await call("PUT", "/emails", { headers: apiKey() })
        expectJson(wrong, 405, { error: "use POST, GET for /emails" })
        assert.strictEqual(wrong.headers.get("allow"), "POST, GET")
        expectJson(await call("PUT", "/v1/attachments", {}), 405, { message: "use DELETE for /v1/attachments" })
      })

      it("GET /openapi.json lists every path", async () => {
        const answer = await call("GET", "/openapi.json")
        assert.strictEqual(answer.status, 200)
        const paths = Object.keys((answer.body as { paths: Record<string, unknown> }).paths).sort()
        assert.deepStrictEqual(paths, [
          "/attachments/delete",
          "/attachments/download",
          "/attachments/presign",
          "/emails",
          "/emails/batch",
          "/emails/{id}",
          "/emails/{id}/cancel",
          "/openapi.json",
          "/suppressions",
          "/suppressions/{email}",
          "/v1/attachments",
          "/v1/attachments/download",
          "/v1/attachments/presign"
        ])
      })

      it("a client that goes away mid-body is not logged as a failure", async () => {
        const { hostname, port } = new URL(server.url)
        const socket = connect(Number(port), hostname)
        await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
        socket.write(
          `POST /emails HTTP/1.1\r\nhost: x\r\nx-api-key: ${keys.acme}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"from":`
        )
        await new Promise((resolve) => setTimeout(resolve, 50))
        socket.destroy()
        await new Promise((resolve) => setTimeout(resolve, 100))
        assert.deepStrictEqual(world.control.logged, [])
      })

      it("a download the client abandons releases the store's stream", async () => {
        const controller = new AbortController()
        const response = await fetch(`${server.url}/_store/endless`, { signal: controller.signal })
        const reader = response.body?.getReader()
        await reader?.read()
        controller.abort()
        for (let i = 0; i < 50 && !world.control.endlessCancelled; i++) await new Promise((r) => setTimeout(r, 20))
        assert.isTrue(world.control.endlessCancelled)
      })

      it("routes a store contributes are served by the same handler", async () => {
        const presigned = await call("POST", "/attachments/presign", {
          headers: apiKey(),
          body: { filename: "via-handler.txt", content_type: "text/plain" }
        })
        const { url, key } = presigned.body as { url: string; key: string }
        const local = `${server.url}/_store/${new URL(url).pathname.slice(1)}${new URL(url).search}`
        const refused = await fetch(local, { method: "PUT", headers: { "content-type": "text/html" }, body: "<b>" })
        assert.strictEqual(refused.status, 403)
        const put = await fetch(local, {
          method: "PUT",
          headers: { "content-type": "text/plain" },
          body: "through the handler"
        })
        assert.strictEqual(put.status, 200)
        const download = await call("GET", `/attachments/download?key=${encodeURIComponent(key)}`, {
          headers: apiKey()
        })
        const getUrl = new URL((download.body as { download_url: string }).download_url)
        const got = await fetch(`${server.url}/_store/${getUrl.pathname.slice(1)}${getUrl.search}`)
        assert.strictEqual(await got.text(), "through the handler")
      })
    })
  })

  describe(`${transport} under path prefixes`, () => {
    let world: World
    let server: Running
    beforeAll(async () => {
      world = makeWorld()
      server = await start(world, { basePath: "/mail/", v1BasePath: "/api" })
    })
    afterAll(() => server.close())

    it("serves the base variant under basePath and v1 under v1BasePath only", async () => {
      const post = (path: string, headers: Record<string, string>) =>
        fetch(`${server.url}${path}`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify({ filename: "a.pdf" })
        })
      assert.strictEqual((await post("/mail/attachments/presign", { "x-api-key": keys.acme })).status, 201)
      assert.strictEqual(
        (await post("/api/v1/attachments/presign", { authorization: `Bearer ${keys.acmeToken}` })).status,
        201
      )
      assert.strictEqual((await post("/attachments/presign", { "x-api-key": keys.acme })).status, 404)
      assert.strictEqual(
        (await post("/mail/v1/attachments/presign", { authorization: `Bearer ${keys.acmeToken}` })).status,
        404
      )
      const doc = (await (await fetch(`${server.url}/mail/openapi.json`)).json()) as { paths: Record<string, unknown> }
      assert.includeMembers(Object.keys(doc.paths), ["/mail/emails", "/api/v1/attachments"])
    })
  })
}

describe("Web handler, whose caller went away", () => {
  // Not every runtime cancels the body of a response it can no longer send: the handler must.
  const endless = async (abort: "before" | "after") => {
    const world = makeWorld()
    const handler = MailroomHandler.fromLayer(world.layer)
    try {
      const controller = new AbortController()
      if (abort === "before") controller.abort()
      const response = await handler.web(new Request("http://127.0.0.1/_store/endless", { signal: controller.signal }))
      assert.strictEqual(response.status, 200)
      if (abort === "after") controller.abort()
      for (let i = 0; i < 50 && !world.control.endlessCancelled; i++) await new Promise((r) => setTimeout(r, 10))
      return world.control.endlessCancelled
    } finally {
      await handler.dispose()
    }
  }
  it("a download whose request was aborted before the answer releases the store's stream", async () => {
    assert.isTrue(await endless("before"))
  })
  it("a download whose request is aborted before anyone reads the body releases the store's stream", async () => {
    assert.isTrue(await endless("after"))
  })
})
