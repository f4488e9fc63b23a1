// The stand-in refuses what Resend refuses, with Resend's status, `name` and headers: without these
// checks the adapter's tests could pass against a server that accepts anything.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as ResendStandIn from "./ResendStandIn.js"

let standIn: ResendStandIn.StandIn
beforeAll(async () => {
  standIn = await ResendStandIn.start({ sendingKeys: ["re_sending_only"], dailyQuota: 1000 })
})
afterAll(() => standIn.close())

const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${standIn.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${standIn.apiKey}`, "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
  })
  const text = await response.text()
  return {
    status: response.status,
    headers: response.headers,
    body: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>)
  }
}

const email = (fields: Record<string, unknown> = {}) => ({
  from: "Acme <billing@acme.example>",
  to: ["alice@example.com"],
  subject: "Hi",
  text: "Hello",
  ...fields
})

const send = (fields: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  call("POST", "/emails", email(fields), headers)

describe("ResendStandIn", () => {
  it("answers a send with 200 {id} and Resend's rate-limit headers", async () => {
    const { status, body, headers } = await send()
    expect(status).toBe(200)
    expect(Object.keys(body ?? {})).toEqual(["id"])
    expect(headers.get("ratelimit-limit")).toBe("2")
    expect(headers.get("ratelimit-remaining")).toBe("1")
    expect(standIn.received(String(body?.id)).from).toEqual({ address: "billing@acme.example", name: "Acme" })
  })

  it("refuses keys as the errors page says, in {statusCode, name, message}", async () => {
    const missing = await send({}, { authorization: "" })
    expect(missing).toMatchObject({ status: 401, body: { statusCode: 401, name: "missing_api_key" } })
    expect((await send({}, { authorization: "Bearer re_wrong" })).body).toMatchObject({
      statusCode: 401,
      name: "validation_error",
      message: "API key is invalid"
    })
    expect((await call("GET", "/domains", undefined, { authorization: "Bearer re_wrong" })).status).toBe(400)
    expect((await send({}, { authorization: "Bearer re_sending_only" })).status).toBe(200)
    const restricted = await call("GET", "/domains", undefined, { authorization: "Bearer re_sending_only" })
    expect(restricted).toMatchObject({ status: 401, body: { name: "restricted_api_key" } })
    expect((await call("GET", "/domains")).body).toMatchObject({ object: "list" })
  })

  it("requires from, to, subject and a body; checks the from format and at most 50 in to", async () => {
    for (const field of ["from", "to", "subject"]) {
      const { status, body } = await send({ [field]: undefined })
      expect(status).toBe(422)
      expect(body).toMatchObject({ name: "missing_required_field", message: `Missing \`${field}\` field.` })
    }
    expect((await send({ text: undefined })).body?.name).toBe("missing_required_field")
    expect((await send({ from: "Acme billing@acme.example" })).body).toMatchObject({
      statusCode: 422,
      name: "validation_error"
    })
    const fifty = Array.from({ length: 50 }, (_, i) => `r${i}@example.com`)
    expect((await send({ to: fifty })).status).toBe(200)
    expect((await send({ to: [...fifty, "one-more@example.com"] })).status).toBe(422)
  })

  it("checks tags, attachments and file types", async () => {
    expect((await send({ tags: [{ name: "org.id", value: "x" }] })).status).toBe(422)
    expect((await send({ tags: [{ name: "org", value: "x" }] })).status).toBe(200)
    const attachment = (a: Record<string, unknown>) => send({ attachments: [a] })
    expect((await attachment({ filename: "a.pdf" })).body?.name).toBe("invalid_attachment")
    expect((await attachment({ filename: "a.pdf", content: "not base64!" })).status).toBe(422)
    expect((await attachment({ filename: "run.PS1", content: "aGk=" })).status).toBe(422)
    expect((await attachment({ filename: "a.pdf", content: "aGk=" })).status).toBe(200)
  })

  it("refuses a From on a domain not verified, and the testing sender to anyone but the owner (403)", async () => {
    const domain = await send({ from: "a@globex.example" })
    expect(domain).toMatchObject({ status: 403, body: { name: "validation_error" } })
    expect(String(domain.body?.message)).toContain("globex.example domain is not verified")
    const testing = await send({ from: "onboarding@resend.dev" })
    expect(testing.status).toBe(403)
    expect(String(testing.body?.message)).toContain(
      "only send testing emails to your own email address (owner@acme.example)"
    )
    expect((await send({ from: "onboarding@resend.dev", to: ["owner@acme.example"] })).status).toBe(200)
  })

  it("replays an Idempotency-Key with the same body, refuses it with another, and checks its length", async () => {
    const key = { "idempotency-key": "order-42" }
    const before = standIn.accepted.length
    const first = await send({}, key)
    const again = await send({}, key)
    expect(again.body?.id).toBe(first.body?.id)
    expect(standIn.accepted.length).toBe(before + 1)
    expect((await send({ subject: "Other" }, key)).body).toMatchObject({
      statusCode: 409,
      name: "invalid_idempotent_request"
    })
    expect((await send({}, { "idempotency-key": "k".repeat(257) })).body?.name).toBe("invalid_idempotency_key")
  })

  it("answers an unknown route 404 not_found and another method on /emails 405", async () => {
    expect((await call("GET", "/v1/emails")).body).toMatchObject({ statusCode: 404, name: "not_found" })
    expect((await call("PUT", "/emails", email())).body).toMatchObject({ statusCode: 405, name: "method_not_allowed" })
  })

  it("answers daily_quota_exceeded once the day's quota is used", async () => {
    const small = await ResendStandIn.start({ dailyQuota: 1 })
    try {
      const post = () =>
        fetch(`${small.url}/emails`, {
          method: "POST",
          headers: { authorization: `Bearer ${small.apiKey}`, "content-type": "application/json" },
          body: JSON.stringify(email())
        })
      expect((await post()).status).toBe(200)
      const refused = await post()
      expect(refused.status).toBe(429)
      expect(await refused.json()).toMatchObject({ name: "daily_quota_exceeded" })
    } finally {
      await small.close()
    }
  })
})
