// The stand-in refuses what Postmark refuses: without these checks the adapter's tests could pass
// against a server that accepts anything.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as PostmarkStandIn from "./PostmarkStandIn.js"

let standIn: PostmarkStandIn.StandIn
beforeAll(async () => {
  standIn = await PostmarkStandIn.start()
})
afterAll(() => standIn.close())

const post = async (fields: Record<string, unknown>, headers: Record<string, string> = {}) => {
  const response = await fetch(`${standIn.url}/email`, {
    method: "POST",
    headers: {
      "X-Postmark-Server-Token": standIn.token,
      Accept: "application/json",
      "Content-Type": "application/json",
      ...headers
    },
    body: JSON.stringify(fields)
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>) }
}

const message = (fields: Record<string, unknown> = {}) => ({
  From: "billing@acme.example",
  To: "alice@example.com",
  Subject: "Hi",
  TextBody: "Hello",
  ...fields
})

const addresses = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => `${prefix}${i}@example.com`).join(", ")

describe("PostmarkStandIn", () => {
  it("answers success as Postmark documents it", async () => {
    const { status, body } = await post(message())
    expect(status).toBe(200)
    expect(body).toMatchObject({ To: "alice@example.com", ErrorCode: 0, Message: "OK" })
    expect(standIn.received(String(body?.MessageID)).to).toEqual(["alice@example.com"])
  })

  it("refuses a missing or wrong server token with HTTP 401 and ErrorCode 10", async () => {
    for (const token of ["", "not-the-token"]) {
      const { status, body } = await post(message(), { "X-Postmark-Server-Token": token })
      expect(status).toBe(401)
      expect(body?.ErrorCode).toBe(10)
    }
  })

  it("refuses a request without the JSON headers with HTTP 415", async () => {
    expect((await post(message(), { "Content-Type": "text/plain" })).status).toBe(415)
    expect((await post(message(), { Accept: "text/html" })).status).toBe(415)
  })

  it("requires From, To, Subject and a body", async () => {
    for (const [missing, code] of [
      ["From", 300],
      ["To", 300],
      ["Subject", 403]
    ] as const) {
      const { status, body } = await post(message({ [missing]: undefined }))
      expect(status).toBe(422)
      expect(body?.ErrorCode).toBe(code)
    }
    expect((await post(message({ TextBody: undefined }))).body).toEqual({
      ErrorCode: 300,
      Message: "Provide either email TextBody or HtmlBody or both."
    })
  })

  it("counts To, Cc and Bcc together against 50 recipients", async () => {
    const fifty = message({ To: addresses(30, "t"), Cc: addresses(10, "c"), Bcc: addresses(10, "b") })
    expect((await post(fifty)).status).toBe(200)
    const { status, body } = await post({ ...fifty, Bcc: addresses(11, "b") })
    expect(status).toBe(422)
    expect(body?.ErrorCode).toBe(300)
  })

  it("refuses a forbidden attachment type in any case, and content that is not base64", async () => {
    const attachment = (Name: string, Content = "aGk=") => ({
      Attachments: [{ Name, Content, ContentType: "text/plain" }]
    })
    expect((await post(message(attachment("setup.EXE")))).body?.ErrorCode).toBe(411)
    expect((await post(message(attachment("notes.txt", "not base64!")))).body?.ErrorCode).toBe(403)
  })

  it("reads a quoted or encoded-word sender name, and refuses backslash escapes as Postmark does", async () => {
    const name = async (From: string) => {
      const { body } = await post(message({ From }))
      return standIn.received(String(body?.MessageID)).from.name
    }
    expect(await name('"Acme, Inc." <billing@acme.example>')).toBe("Acme, Inc.")
    expect(await name("=?UTF-8?B?Wm/Dqw==?= <billing@acme.example>")).toBe("Zoë")
    expect((await post(message({ From: '"Acme \\"Best\\"" <billing@acme.example>' }))).body?.ErrorCode).toBe(300)
  })

  it("refuses Metadata over its limits, and malformed Headers, as Postmark does", async () => {
    const fields = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`field${i}`, "v"]))
    expect((await post(message({ Metadata: fields(10), Headers: [{ Name: "X-A", Value: "b" }] }))).status).toBe(200)
    for (const Metadata of [
      fields(11),
      { [`${"n".repeat(21)}`]: "v" },
      { name: "v".repeat(81) },
      { a_key: "1", A_Key: "2" }
    ]) {
      const { status, body } = await post(message({ Metadata }))
      expect(status).toBe(422)
      expect(body?.ErrorCode).toBe(300)
    }
    expect((await post(message({ Metadata: { n: 1 } }))).body?.ErrorCode).toBe(403)
    expect((await post(message({ Headers: [{ Name: "X-A" }] }))).body?.ErrorCode).toBe(403)
  })

  it("refuses a body over 10 MiB with HTTP 413", async () => {
    const big = Buffer.alloc(8 * 1024 * 1024).toString("base64")
    const { status } = await post(
      message({ Attachments: [{ Name: "a.bin.pdf", Content: big, ContentType: "application/pdf" }] })
    )
    expect(status).toBe(413)
  })
})
