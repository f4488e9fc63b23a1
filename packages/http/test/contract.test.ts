// GET /openapi.json is the contract: every answer of a scripted flow, successes and every error,
// must be one the document lists, in the shape it gives; and the document accepts what the server does.

import { ProviderError } from "@mailroom/core"
import { Validator } from "@seriousme/openapi-schema-validator"
import { Duration } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { OpenApi } from "../src/index.js"
import { type Document, makeContract, type Observed } from "./contract.js"
import { keys, makeWorld, type Running, transports, type World } from "./world.js"

const publicUrl = "https://mail.example.test"
const maxBodyBytes = 16 * 1024

it("the served document is a valid OpenAPI 3.1 document, with the public URL as its server", async () => {
  const validator = new Validator()
  const result = await validator.validate(OpenApi.document({ publicUrl: `${publicUrl}/`, webhooks: ["ses"] }) as never)
  assert.isTrue(result.valid, JSON.stringify(result.errors))
  assert.strictEqual(validator.version, "3.1")
  assert.deepStrictEqual((OpenApi.document({ publicUrl }) as unknown as Document).servers, [{ url: publicUrl }])
})

const message = {
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject: "Your invoice",
  body: { text: "See attached." }
}

const failing = (reason: ProviderError.ProviderError["reason"]) =>
  new ProviderError.ProviderError({ provider: "test", reason })

for (const [transport, start] of Object.entries(transports)) {
  describe(transport, () => {
    let world: World
    let server: Running
    let document: Document
    const observed: Array<Observed> = []
    beforeAll(async () => {
      world = makeWorld()
      server = await start(world, { maxBodyBytes, publicUrl })
      document = (await (await fetch(`${server.url}/openapi.json`)).json()) as Document
    })
    afterAll(() => server.close())

    /** One request; its answer is kept to be checked against the document. */
    const call = async (
      method: string,
      path: string,
      init: {
        headers?: Record<string, string>
        query?: string
        body?: unknown
        raw?: string
        type?: string
        /** The path as the document writes it, for a path with a parameter (`/emails/{id}`). */
        as?: string
      } = {}
    ) => {
      const body = init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body))
      const response = await fetch(`${server.url}${path}${init.query ?? ""}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { "content-type": init.type ?? "application/json" }),
          ...init.headers
        },
        ...(body === undefined ? {} : { body })
      })
      const text = await response.text()
      const answer = {
        method,
        path: init.as ?? path,
        status: response.status,
        headers: response.headers,
        body: JSON.parse(text)
      }
      observed.push(answer)
      return answer
    }
    const apiKey = { "x-api-key": keys.acme }
    const bearer = { authorization: `Bearer ${keys.acmeToken}` }
    const upload = async (path: string, headers: Record<string, string>) => {
      const presigned = await call("POST", path, {
        headers,
        body: { filename: "a.pdf", content_type: "application/pdf" }
      })
      assert.strictEqual(presigned.status, 201)
      const body = presigned.body as { url: string; key: string; attachment_id: string }
      const put = await world.memory.fetch(body.url, {
        method: "PUT",
        headers: { "content-type": "application/pdf" },
        body: "%PDF"
      })
      assert.strictEqual(put.status, 200)
      return body
    }
    const whileDown = async <A>(flag: "storeBroken" | "organizationsDown", run: () => Promise<A>) => {
      world.control[flag] = true
      try {
        return await run()
      } finally {
        world.control[flag] = false
      }
    }

    const withMessages = async <A>(state: "down" | "broken", run: () => Promise<A>) => {
      world.control.messages = state
      try {
        return await run()
      } finally {
        world.control.messages = "up"
      }
    }

    it("records and suppressions: what the document accepts the server accepts, and refuses what it refuses", async () => {
      const contract = makeContract(document)
      await call("POST", "/emails", { headers: apiKey, body: message })
      const sent = await call("POST", "/emails", { headers: apiKey, body: message })
      const id = (sent.body as { message_id: string }).message_id
      const cursor = (
        (await call("GET", "/emails", { headers: apiKey, query: "?limit=1" })).body as { next_cursor: string }
      ).next_cursor
      const queries: ReadonlyArray<[string, string, string, boolean]> = [
        ["/emails", "limit", "1", true],
        ["/emails", "limit", "100", true],
        ["/emails", "limit", "05", true],
        ["/emails", "limit", "0", false],
        ["/emails", "limit", "101", false],
        ["/emails", "limit", "1.5", false],
        ["/emails", "limit", "-1", false],
        ["/emails", "limit", "ten", false],
        ["/emails", "cursor", cursor, true],
        ["/emails", "cursor", "{}", false],
        ["/emails", "status", "delivered", true],
        ["/emails", "status", "lost", false],
        ["/emails", "to", "o'brien+tag@example.com", true],
        ["/emails", "to", "alice", false],
        ["/emails", "tag", "kind:welcome-2", true],
        ["/emails", "tag", "kind", false],
        ["/emails", "tag", "a:b:c", false],
        ["/emails", "tag", "a b:c", false],
        ["/emails", "since", "2026-05-01T09:00:00+02:00", true],
        ["/emails", "since", "2028-02-29t09:00:00.123456789z", true],
        ["/emails", "since", "2026-02-29T09:00:00Z", false],
        ["/emails", "since", "2026-05-01T09:00:00", false],
        ["/emails", "since", "2026-05-01T09:00:00+0200", false],
        ["/emails", "since", "2026-05-01 09:00:00Z", false],
        ["/emails", "until", "2026-12-31T23:59:60Z", false],
        ["/emails", "until", "2026-05-01", false],
        ["/suppressions", "limit", "20", true],
        ["/suppressions", "limit", "0", false],
        ["/suppressions", "reason", "bounced", true],
        ["/suppressions", "reason", "spam", false]
      ]
      for (const [path, name, value, valid] of queries) {
        const where = `${path} ${name}=${value}`
        assert.strictEqual(contract.acceptsParameter("GET", path, name, value), valid, where)
        const answer = await call("GET", path, { headers: apiKey, query: `?${new URLSearchParams({ [name]: value })}` })
        assert.strictEqual(answer.status, valid ? 200 : 400, `${where}: ${JSON.stringify(answer.body)}`)
      }
      for (const [value, status] of [
        [id, 200],
        [id.toUpperCase(), 200],
        ["0190c3b2-0000-7000-8000-000000000000", 404],
        ["not-an-id", 404],
        [`${id.slice(0, -1)}g`, 404]
      ] as const) {
        assert.strictEqual(
          contract.acceptsParameter("GET", "/emails/{id}", "id", value),
          status === 200 || value.startsWith("0190"),
          value
        )
        assert.strictEqual(
          (await call("GET", `/emails/${value}`, { headers: apiKey, as: "/emails/{id}" })).status,
          status
        )
      }
      const suppressions: ReadonlyArray<[Record<string, unknown>, boolean]> = [
        [{ email: "s1@example.com" }, true],
        [{ email: `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(57)}.com` }, true],
        [{ email: "s2@example.com", reason: "complained", detail: "" }, true],
        [{ email: "s3@example.com", reason: "manual", detail: "é\t".repeat(250) }, true],
        [{}, false],
        [{ email: "x" }, false],
        [{ email: "a@b.123" }, false],
        [{ email: "s4@example.com", reason: "spam" }, false],
        [{ email: "s4@example.com", reason: null }, false],
        [{ email: "s4@example.com", detail: "x".repeat(501) }, false],
        [{ email: "s4@example.com", detail: "a\u0000b" }, false],
        [{ email: "s4@example.com", note: "x" }, false]
      ]
      for (const [body, valid] of suppressions) {
        assert.strictEqual(contract.acceptsBody("POST", "/suppressions", body), valid, JSON.stringify(body))
        const answer = await call("POST", "/suppressions", { headers: apiKey, body })
        assert.strictEqual(answer.status, valid ? 201 : 400, `${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`)
      }
      for (const [email, status] of [
        ["s1@example.com", 200],
        ["nobody@example.com", 404],
        ["eve", 400],
        ["a@b.123", 400]
      ] as const) {
        assert.strictEqual(contract.acceptsParameter("DELETE", "/suppressions/{email}", "email", email), status !== 400)
        const path = `/suppressions/${encodeURIComponent(email)}`
        assert.strictEqual(
          (await call("DELETE", path, { headers: apiKey, as: "/suppressions/{email}" })).status,
          status
        )
      }
    })

    it("what the document accepts the server accepts, and what it refuses the server refuses", async () => {
      const contract = makeContract(document)
      const { key } = await upload("/attachments/presign", apiKey)
      const attachment = { filename: "a.pdf", key }
      const longest = `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(57)}.com`
      const accepted: ReadonlyArray<Record<string, unknown>> = [
        { ...message, to: [longest, "o'brien+tag@example.com", "x@xn--bcher-kva.example"] },
        { ...message, from: "billing@mail.acme.example", from_name: "", cc: [], bcc: [], reply_to: [] },
        { ...message, from_name: "n".repeat(256), subject: "s".repeat(998) },
        { ...message, subject: "😀".repeat(998) },
        { ...message, subject: " \tleading and trailing\t " },
        { ...message, subject: "=?utf-8?q?x?=", from_name: "=?utf-8?b?eA==?=" },
        { ...message, body: { html: "", text: "x" } },
        { ...message, body: { html: "<p>x</p>" } },
        { ...message, attachments: [] },
        { ...message, attachments: [{ ...attachment, filename: `${"é".repeat(251)}.pdf` }] },
        { ...message, attachments: [{ ...attachment, content_type: 'text/plain; charset="utf-8"' }] },
        {
          ...message,
          tags: [{ name: "kind", value: "welcome-2" }],
          headers: { "X-Campaign": "spring", "In-Reply-To": "<a@b>" }
        },
        { ...message, unsubscribe: { url: "https://acme.example/u?id=1", mailto: "unsub@acme.example" } },
        { ...message, body: { html: '<img src="cid:logo">' }, attachments: [{ ...attachment, content_id: "logo" }] }
      ]
      for (const body of accepted) {
        assert.isTrue(contract.acceptsBody("POST", "/emails", body), JSON.stringify(body))
        const answer = await call("POST", "/emails", { headers: apiKey, body })
        assert.strictEqual(answer.status, 201, `${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`)
      }
      const refused: ReadonlyArray<Record<string, unknown>> = [
        { ...message, to: [] },
        { ...message, from: "x" },
        { ...message, to: ["a@b.123"] },
        { ...message, to: [`${longest}m`] },
        { ...message, subject: "" },
        { ...message, subject: " \t " },
        { ...message, subject: "s".repeat(999) },
        { ...message, subject: "a\u0000b" },
        { ...message, from_name: "n".repeat(257) },
        { ...message, body: { html: "", text: "" } },
        { ...message, attachments: [{ ...attachment, content_type: "pdf" }] },
        { ...message, attachments: [{ ...attachment, filename: "" }] },
        { ...message, replyTo: ["a@acme.example"] },
        { ...message, tags: [{ name: "a b", value: "x" }] },
        { ...message, tags: Array.from({ length: 11 }, (_, i) => ({ name: `t${i}`, value: "v" })) },
        { ...message, headers: { Subject: "x" } },
        { ...message, headers: { "content-TYPE": "x" } },
        { ...message, headers: { "X-Mailroom-Organization": "org_globex" } },
        { ...message, headers: { "X-A": "a\nBcc: x@example.com" } },
        { ...message, headers: { "Bad Name": "x" } },
        { ...message, unsubscribe: { url: "http://acme.example/u" } },
        { ...message, attachments: [{ ...attachment, content_id: "a b" }] }
      ]
      for (const body of refused) {
        assert.isFalse(contract.acceptsBody("POST", "/emails", body), JSON.stringify(body))
        assert.strictEqual((await call("POST", "/emails", { headers: apiKey, body })).status, 400, JSON.stringify(body))
      }
      // Sending later: what the document says of scheduled_at, the server says too (the time's
      // bounds, 1 second to 30 days ahead, are the clock's and the document's description's).
      const soon = new Date(Date.now() + 3_600_000)
      const offset = `${soon.toISOString().slice(0, 19)}+00:00`
      const schedules: ReadonlyArray<[unknown, boolean]> = [
        [soon.toISOString(), true],
        [offset, true],
        [offset.replace("T", "t").replace("+00:00", "z"), true],
        [soon.toISOString().slice(0, 19), false],
        [soon.toISOString().replace("T", " "), false],
        ["2026-02-30T09:00:00Z", false],
        [1_800_000_000, false],
        [null, false]
      ]
      for (const [when, valid] of schedules) {
        const body = { ...message, scheduled_at: when }
        assert.strictEqual(contract.acceptsBody("POST", "/emails", body), valid, String(when))
        const answer = await call("POST", "/emails", { headers: apiKey, body })
        assert.strictEqual(answer.status, valid ? 202 : 400, `${String(when)}: ${JSON.stringify(answer.body)}`)
        if (!valid) assert.match((answer.body as { errors: Array<string> }).errors[0] ?? "", /^scheduled_at: /)
        const scheduled = answer.body as { message_id: string }
        if (valid) {
          const moved = { scheduled_at: when }
          assert.isTrue(contract.acceptsBody("PATCH", "/emails/{id}", moved))
          const patched = await call("PATCH", `/emails/${scheduled.message_id}`, {
            headers: apiKey,
            body: moved,
            as: "/emails/{id}"
          })
          assert.strictEqual(patched.status, 200, JSON.stringify(patched.body))
        } else {
          assert.isFalse(contract.acceptsBody("PATCH", "/emails/{id}", { scheduled_at: when }))
        }
      }
      assert.isFalse(contract.acceptsBody("PATCH", "/emails/{id}", { scheduled_at: soon.toISOString(), to: [] }))
      // Sending many: the batch as a whole; an item the document refuses is one the server refuses.
      const batches: ReadonlyArray<[unknown, boolean]> = [
        [[message], true],
        [Array.from({ length: 100 }, () => message), true],
        [[], false],
        [Array.from({ length: 101 }, () => message), false],
        [message, false],
        ["x", false]
      ]
      for (const [body, valid] of batches) {
        assert.strictEqual(contract.acceptsBody("POST", "/emails/batch", body), valid)
        const answer = await call("POST", "/emails/batch", { headers: apiKey, body })
        assert.strictEqual(answer.status, valid ? 200 : 400, JSON.stringify(answer.body).slice(0, 200))
        if (valid) assert.deepStrictEqual((answer.body as { errors: unknown }).errors, [])
        else assert.deepStrictEqual(answer.body, { errors: ["request: must be an array of 1 to 100 send requests"] })
      }
      for (const body of refused.slice(0, 6)) {
        assert.isFalse(contract.acceptsBody("POST", "/emails/batch", [message, body]))
        const answer = await call("POST", "/emails/batch", { headers: apiKey, body: [message, body] })
        assert.strictEqual(answer.status, 200)
        assert.deepStrictEqual(
          (answer.body as { errors: Array<{ index: number }> }).errors.map((e) => e.index),
          [1],
          JSON.stringify(body)
        )
      }
      const presigns: ReadonlyArray<[Record<string, unknown>, boolean]> = [
        [{ filename: " a" }, true],
        [{ filename: "a", content_length: 0 }, true],
        [{ filename: "a", content_length: 25 * 1024 * 1024 }, true],
        [{ filename: "a", content_length: 25 * 1024 * 1024 + 1 }, false],
        [{ filename: "a", content_length: 1.5 }, false],
        [{ filename: "a", content_length: -1 }, false],
        [{ filename: "a", content_length: "1" }, false],
        [{ filename: " " }, false]
      ]
      for (const [body, valid] of presigns) {
        assert.strictEqual(contract.acceptsBody("POST", "/v1/attachments/presign", body), valid, JSON.stringify(body))
        const answer = await call("POST", "/v1/attachments/presign", { headers: bearer, body })
        assert.strictEqual(answer.status, valid ? 201 : 400, JSON.stringify(body))
      }
      for (const [id, valid] of [
        ["xyz", false],
        ["att_", false],
        ["att_AB", false],
        [`att_${"0".repeat(2000)}`, false],
        ["att_00", true]
      ] as const) {
        assert.strictEqual(contract.acceptsBody("DELETE", "/v1/attachments", { attachment_id: id }), valid, id)
        assert.strictEqual(contract.acceptsParameter("GET", "/v1/attachments/download", "attachment_id", id), valid, id)
        const answer = await call("GET", "/v1/attachments/download", { headers: bearer, query: `?attachment_id=${id}` })
        // A well-formed id names nothing here: a 404, not a 400.
        assert.strictEqual(answer.status, valid ? 404 : 400, id)
      }
    })

    it("every answer of the flow is listed, in the document's shape, and every listed answer occurs", async () => {
      const tooBig = { ...message, body: { text: "x".repeat(maxBodyBytes) } }
      const strangers = { "x-api-key": "mr_nobody" }
      // POST /emails
      const { key } = await upload("/attachments/presign", apiKey)
      await call("POST", "/emails", {
        headers: apiKey,
        body: { ...message, attachments: [{ filename: "a.pdf", key }] }
      })
      await call("POST", "/emails", { headers: apiKey, body: { ...message, to: [] } })
      await call("POST", "/emails", { headers: strangers, body: message })
      await call("POST", "/emails", {
        headers: { ...apiKey, "idempotency-key": `k-${transport.replace(/\W/g, "")}` },
        body: message
      })
      await call("POST", "/emails", {
        headers: { ...apiKey, "idempotency-key": `k-${transport.replace(/\W/g, "")}` },
        body: { ...message, subject: "Other" }
      })
      await call("POST", "/emails", { headers: apiKey, body: tooBig })
      await call("POST", "/emails", { headers: apiKey, raw: "hello", type: "text/plain" })
      await call("POST", "/emails", { headers: apiKey, body: { ...message, from: "a@globex.example" } })
      world.control.failures.push(
        failing(new ProviderError.RateLimited({ message: "slow down", retryAfter: Duration.seconds(2) }))
      )
      await call("POST", "/emails", { headers: apiKey, body: message })
      world.control.failures.push(failing(new ProviderError.Unknown({ message: "vendor broke" })))
      await call("POST", "/emails", { headers: apiKey, body: message })
      world.control.failures.push(failing(new ProviderError.SendingPaused({ message: "paused", permanent: false })))
      await call("POST", "/emails", { headers: apiKey, body: message })
      // Both presign variants
      for (const [path, headers, otherOrg] of [
        ["/attachments/presign", apiKey, "org_globex"],
        ["/v1/attachments/presign", bearer, "org_globex"]
      ] as const) {
        await call("POST", path, { headers, body: {} })
        await call("POST", path, { body: { filename: "a.pdf" } })
        await call("POST", path, { headers, body: { filename: "a.pdf", org_id: otherOrg } })
        await call("POST", path, { headers, body: { filename: "x".repeat(maxBodyBytes) } })
        await call("POST", path, { headers, raw: "a.pdf", type: "text/plain" })
        await whileDown("storeBroken", () => call("POST", path, { headers, body: { filename: "a.pdf" } }))
        await whileDown("organizationsDown", () => call("POST", path, { headers, body: { filename: "a.pdf" } }))
      }
      // Base download and delete by key
      for (const [method, path] of [
        ["GET", "/attachments/download"],
        ["DELETE", "/attachments/delete"]
      ] as const) {
        const { key } = await upload("/attachments/presign", apiKey)
        await call(method, path, { headers: apiKey, query: `?key=${encodeURIComponent(key)}` })
        await call(method, path, { headers: apiKey, query: "?key=a&key=b" })
        await call(method, path, { query: `?key=${encodeURIComponent(key)}` })
        await call(method, path, { headers: apiKey, query: "?key=attachments/org_acme/1-missing.pdf" })
        await whileDown("storeBroken", () =>
          call(method, path, { headers: apiKey, query: `?key=${encodeURIComponent(key)}` })
        )
        await whileDown("organizationsDown", () => call(method, path, { headers: apiKey, query: "?key=a" }))
      }
      // v1 download by id and delete by body
      const { attachment_id: id } = await upload("/v1/attachments/presign", bearer)
      const gone = (await upload("/v1/attachments/presign", bearer)).attachment_id
      await call("DELETE", "/v1/attachments", { headers: bearer, body: { attachment_id: gone } })
      await call("GET", "/v1/attachments/download", { headers: bearer, query: `?attachment_id=${id}` })
      await call("GET", "/v1/attachments/download", { headers: bearer, query: "?attachment_id=xyz" })
      await call("GET", "/v1/attachments/download", { query: `?attachment_id=${id}` })
      await call("GET", "/v1/attachments/download", { headers: bearer, query: `?attachment_id=${gone}` })
      await whileDown("storeBroken", () =>
        call("GET", "/v1/attachments/download", { headers: bearer, query: `?attachment_id=${id}` })
      )
      await whileDown("organizationsDown", () =>
        call("GET", "/v1/attachments/download", { headers: bearer, query: `?attachment_id=${id}` })
      )
      await call("DELETE", "/v1/attachments", { headers: bearer, body: { attachment_id: "xyz" } })
      await call("DELETE", "/v1/attachments", { body: { attachment_id: id } })
      await call("DELETE", "/v1/attachments", { headers: bearer, body: { attachment_id: gone } })
      await call("DELETE", "/v1/attachments", { headers: bearer, body: { attachment_id: "a".repeat(maxBodyBytes) } })
      await call("DELETE", "/v1/attachments", { headers: bearer, raw: id, type: "text/plain" })
      await whileDown("storeBroken", () =>
        call("DELETE", "/v1/attachments", { headers: bearer, body: { attachment_id: id } })
      )
      await whileDown("organizationsDown", () =>
        call("DELETE", "/v1/attachments", { headers: bearer, body: { attachment_id: id } })
      )
      await call("GET", "/openapi.json")
      // Records and suppressions
      const sent = await call("POST", "/emails", { headers: apiKey, body: message })
      const messageId = (sent.body as { message_id: string }).message_id
      const byId = { headers: apiKey, as: "/emails/{id}" }
      await call("GET", "/emails", { headers: apiKey, query: "?limit=2" })
      await call("GET", "/emails", { headers: apiKey, query: "?limit=0&tag=x" })
      await call("GET", "/emails")
      await call("GET", `/emails/${messageId}`, byId)
      await call("GET", "/emails/%E0%A4%A", byId)
      await call("GET", `/emails/${messageId}`, { as: "/emails/{id}" })
      await call("GET", "/emails/0190c3b2-0000-7000-8000-000000000000", byId)
      await call("GET", "/suppressions", { headers: apiKey })
      await call("GET", "/suppressions", { headers: apiKey, query: "?reason=spam" })
      await call("GET", "/suppressions")
      const suppress = (body: unknown, headers: Record<string, string> = apiKey) =>
        call("POST", "/suppressions", { headers, body })
      await suppress({ email: "flow@example.com" })
      await suppress({ email: "flow@example.com" })
      await suppress({ email: "flow" })
      await suppress({ email: "flow@example.com" }, {})
      await suppress({ email: "flow@example.com", detail: "x".repeat(maxBodyBytes) })
      await call("POST", "/suppressions", { headers: apiKey, raw: "flow@example.com", type: "text/plain" })
      const unsuppress = (email: string, headers: Record<string, string> = apiKey) =>
        call("DELETE", `/suppressions/${encodeURIComponent(email)}`, { headers, as: "/suppressions/{email}" })
      await unsuppress("flow@example.com")
      await unsuppress("flow@example.com")
      await unsuppress("flow")
      await unsuppress("flow@example.com", {})
      for (const state of ["down", "broken"] as const) {
        await withMessages(state, async () => {
          await call("GET", "/emails", { headers: apiKey })
          await call("GET", `/emails/${messageId}`, byId)
          await call("GET", "/suppressions", { headers: apiKey })
          await suppress({ email: "flow@example.com" })
          await unsuppress("flow@example.com")
        })
      }

      // Sending later and sending many
      const later = new Date(Date.now() + 3_600_000).toISOString()
      const scheduled = await call("POST", "/emails", { headers: apiKey, body: { ...message, scheduled_at: later } })
      const scheduledId = (scheduled.body as { message_id: string }).message_id
      const patch = (id: string, body: unknown, headers: Record<string, string> = apiKey) =>
        call("PATCH", `/emails/${id}`, { headers, body, as: "/emails/{id}" })
      await patch(scheduledId, { scheduled_at: later })
      await patch(scheduledId, { scheduled_at: "soon" })
      await patch(scheduledId, { scheduled_at: later }, {})
      await patch("0190c3b2-0000-7000-8000-000000000000", { scheduled_at: later })
      await patch(messageId, { scheduled_at: later })
      await patch(scheduledId, { scheduled_at: "x".repeat(maxBodyBytes) })
      await call("PATCH", `/emails/${scheduledId}`, {
        headers: apiKey,
        raw: later,
        type: "text/plain",
        as: "/emails/{id}"
      })
      const cancel = (id: string, headers: Record<string, string> = apiKey) =>
        call("POST", `/emails/${id}/cancel`, { headers, as: "/emails/{id}/cancel" })
      await cancel("%E0%A4%A")
      await cancel(scheduledId, {})
      await cancel("0190c3b2-0000-7000-8000-000000000000")
      await cancel(messageId)
      await cancel(scheduledId)
      const batch = (body: unknown, headers: Record<string, string> = apiKey) =>
        call("POST", "/emails/batch", { headers, body })
      const batchKey = { ...apiKey, "idempotency-key": `b-${transport.replace(/\W/g, "")}` }
      await batch([message, { ...message, to: [] }], batchKey)
      await batch([message, { ...message, to: [] }], batchKey)
      await batch([message], batchKey)
      await batch([{ ...message, to: [] }])
      await batch({ not: "an array" })
      await batch([message], {})
      await batch([tooBig, ...Array.from({ length: 10 }, () => tooBig)])
      await call("POST", "/emails/batch", { headers: apiKey, raw: "[]", type: "text/plain" })
      await whileDown("organizationsDown", () => batch([message]))
      world.control.idempotency = "broken"
      await batch([message], { ...apiKey, "idempotency-key": "broken" })
      world.control.idempotency = "up"
      for (const state of ["down", "broken"] as const) {
        await withMessages(state, async () => {
          await patch(scheduledId, { scheduled_at: later })
          await cancel(scheduledId)
        })
      }

      const contract = makeContract(document)
      assert.deepStrictEqual(observed.flatMap(contract.problems), [])
      const seen = new Set(observed.map((o) => `${o.method} ${o.path} ${o.status}`))
      assert.deepStrictEqual(
        contract.listed().filter((listed) => !seen.has(listed)),
        []
      )
    })
  })
}
