import { randomBytes } from "node:crypto"
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { it as effectIt } from "@effect/vitest"
import { EmailProvider, MailEvent, type ProviderError } from "@mailroom/core"
import { EmailProviderSuite, expectConfigError, outboundEmail, type ReceivedEmail } from "@mailroom/core/testing"
import { Config, ConfigProvider, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { type AddressObject, simpleParser } from "mailparser"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { OutboxEmailProvider } from "../src/index.js"

// mailparser leaves custom header values encoded; libmime, its own header decoder (reached through
// it rather than added as a dependency), decodes them as a client built on it does.
const libmime = createRequire(createRequire(import.meta.url).resolve("mailparser"))("libmime") as {
  readonly decodeWords: (text: string) => string
}

const addresses = (field: AddressObject | Array<AddressObject> | undefined): Array<string> =>
  (field === undefined ? [] : Array.isArray(field) ? field : [field]).flatMap((group) =>
    group.value.flatMap((a) => (a.address === undefined ? [] : [a.address]))
  )

/** The header section of a raw message as written, and its fields unfolded (RFC 5322 2.2.3), names as written. */
const headerSection = (raw: Buffer) => {
  const text = raw.toString("latin1")
  const rawHeaders = text.slice(0, text.indexOf("\r\n\r\n"))
  const headers = rawHeaders.split(/\r\n(?![ \t])/).map((field) => {
    const colon = field.indexOf(":")
    return {
      name: field.slice(0, colon),
      value: field
        .slice(colon + 1)
        .replace(/\r\n/g, "")
        .replace(/^[ \t]+/, "")
    }
  })
  return { rawHeaders, headers }
}

/** The pairs written as `{prefix}{name}: {value}` headers. */
const prefixed = (headers: ReadonlyArray<{ readonly name: string; readonly value: string }>, prefix: string) =>
  headers.flatMap((h) =>
    h.name.toLowerCase().startsWith(prefix.toLowerCase()) ? [{ name: h.name.slice(prefix.length), value: h.value }] : []
  )

/** The blind copies the outbox's own header lists, as a reader splits it. */
const bccOf = (headers: ReadonlyArray<{ readonly name: string; readonly value: string }>) =>
  (headers.find((h) => h.name === OutboxEmailProvider.bccHeader)?.value ?? "")
    .split(",")
    .map((address) => address.trim())
    .filter((address) => address !== "")

/**
 * The message as a mail client reads it: the .eml parsed by mailparser, its header section as
 * written, the blind copies from the outbox's X-Mailroom-Bcc header.
 */
const readMessage = async (dir: string, messageId: string): Promise<ReceivedEmail> => {
  const raw = await readFile(path.join(dir, `${messageId}.eml`))
  // cid: links as written, not replaced by data: URLs of the parts they name.
  const parsed = await simpleParser(raw, { keepCidLinks: true })
  const from = parsed.from?.value[0]
  const { rawHeaders, headers } = headerSection(raw)
  const organization = headers.find((h) => h.name === OutboxEmailProvider.organizationHeader)
  return {
    from: { address: from?.address ?? "", ...(from?.name ? { name: from.name } : {}) },
    to: addresses(parsed.to),
    cc: addresses(parsed.cc),
    bcc: bccOf(headers),
    replyTo: addresses(parsed.replyTo),
    subject: parsed.subject ?? "",
    text: parsed.text,
    html: parsed.html === false ? undefined : parsed.html,
    attachments: parsed.attachments.map((a) => ({
      filename: a.filename ?? "",
      contentType: a.contentType,
      content: new Uint8Array(a.content),
      contentId: a.cid,
      disposition: a.contentDisposition === "inline" ? "inline" : "attachment"
    })),
    headers,
    rawHeaders,
    tags: prefixed(headers, "X-Mailroom-Tag-"),
    metadata: Object.fromEntries([
      ...(organization === undefined ? [] : [[MailEvent.organizationKey, organization.value]]),
      ...prefixed(headers, "X-Mailroom-Metadata-").map((m) => [m.name, m.value])
    ])
  }
}

const message = (parts: Partial<EmailProvider.OutboundEmail> = {}) =>
  outboundEmail({ from: { address: "sender@acme.example" }, subject: "Your receipt", text: "Thanks", ...parts })

const outbox = (options: OutboxEmailProvider.Options) => Effect.runPromise(OutboxEmailProvider.make(options))
const send = (provider: EmailProvider.EmailProvider, email: EmailProvider.OutboundEmail) =>
  Effect.runPromise(provider.send(email))
const failure = (provider: EmailProvider.EmailProvider, email: EmailProvider.OutboundEmail) =>
  Effect.runPromise(Effect.flip(provider.send(email))) as Promise<ProviderError.ProviderError>

let base: string
beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), "mailroom-outbox-"))
})
afterAll(() => rm(base, { recursive: true, force: true }))

let count = 0
const freshDir = () => path.join(base, `outbox-${count++}`)
const filesIn = async (dir: string) => (await readdir(dir).catch(() => [] as Array<string>)).sort()

// --- the conformance suite, read back from the .eml files ----------------------------------------

const suiteDir = path.join(tmpdir(), `mailroom-outbox-suite-${process.pid}-${Date.now()}`)
EmailProviderSuite("OutboxEmailProvider (.eml parsed by mailparser)", {
  layer: Layer.effect(
    EmailProvider.EmailProvider,
    Effect.acquireRelease(OutboxEmailProvider.make({ dir: suiteDir }), () =>
      Effect.promise(() => rm(suiteDir, { recursive: true, force: true }))
    )
  ),
  read: (messageId) => Effect.promise(() => readMessage(suiteDir, messageId))
})

// --- outbox-specific cases ------------------------------------------------------------------------

describe("OutboxEmailProvider", () => {
  it("writes {message_id}.eml with a matching Message-ID, and no other file", async () => {
    const dir = freshDir()
    const provider = await outbox({ dir })
    assert.strictEqual(provider.name, "outbox")
    const { messageId } = await send(provider, message())
    assert.match(messageId, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    assert.deepStrictEqual(await filesIn(dir), [`${messageId}.eml`])
    const raw = await readFile(path.join(dir, `${messageId}.eml`), "utf8")
    assert.match(raw, new RegExp(`^Message-ID: <${messageId}@outbox\\.mailroom>\\r$`, "m"))
    const parsed = await simpleParser(raw)
    assert.strictEqual(parsed.messageId, `<${messageId}@outbox.mailroom>`)
    assert.instanceOf(parsed.date, Date)
  })

  it("message ids are unique and sort in the order the messages were sent", async () => {
    const provider = await outbox({ dir: freshDir() })
    const ids: Array<string> = []
    for (let i = 0; i < 30; i++) ids.push((await send(provider, message())).messageId)
    assert.strictEqual(new Set(ids).size, ids.length)
    assert.deepStrictEqual([...ids].sort(), ids)
  })

  it("Bcc recipients are listed in the outbox's X-Mailroom-Bcc header, never in a Bcc header", async () => {
    const dir = freshDir()
    const provider = await outbox({ dir })
    const bcc = Array.from({ length: 12 }, (_, i) => `blind.copy.number.${i}@example.com`)
    const { messageId } = await send(provider, message({ to: ["alice@example.com"], cc: ["carol@example.com"], bcc }))
    const raw = await readFile(path.join(dir, `${messageId}.eml`))
    const { rawHeaders, headers } = headerSection(raw)
    assert.notMatch(rawHeaders, /^bcc:/im)
    assert.isTrue(
      rawHeaders.split("\r\n").every((line) => line.length <= 78),
      "a long list is folded"
    )
    assert.deepStrictEqual(bccOf(headers), bcc)
    const parsed = await simpleParser(raw)
    assert.isUndefined(parsed.bcc, "a mail client shows no Bcc")
    assert.deepStrictEqual(addresses(parsed.to), ["alice@example.com"])
    const plain = await send(provider, message({ to: ["alice@example.com"] }))
    const { headers: without } = headerSection(await readFile(path.join(dir, `${plain.messageId}.eml`)))
    assert.isUndefined(
      without.find((h) => h.name === OutboxEmailProvider.bccHeader),
      "no header without blind copies"
    )
  })

  it("a non-ASCII sender name is RFC 2047-encoded in the raw file", async () => {
    const dir = freshDir()
    const provider = await outbox({ dir })
    const { messageId } = await send(
      provider,
      message({ from: { address: "sender@acme.example", name: "Zoë Ångström" } })
    )
    const raw = await readFile(path.join(dir, `${messageId}.eml`))
    const headers = raw.toString("latin1").split("\r\n\r\n")[0] ?? ""
    // Headers are 7-bit: the name travels as encoded words.
    assert.isTrue(
      [...headers].every((c) => c.charCodeAt(0) < 0x80),
      "a header holds raw non-ASCII bytes"
    )
    assert.match(headers, /^From: =\?UTF-8\?[BQ]\?/im)
    assert.strictEqual((await simpleParser(raw)).from?.value[0]?.name, "Zoë Ångström")
  })

  it("html and text are multipart/alternative; attachments sit beside them in multipart/mixed", async () => {
    const dir = freshDir()
    const provider = await outbox({ dir })
    const pdf = new Uint8Array(randomBytes(5_000))
    const { messageId } = await send(
      provider,
      message({
        html: "<p>Hi</p>",
        text: "Hi",
        attachments: [{ filename: "invoice.pdf", contentType: "application/pdf", content: pdf }]
      })
    )
    const raw = await readFile(path.join(dir, `${messageId}.eml`), "utf8")
    assert.match(raw, /^Content-Type: multipart\/mixed;/m)
    assert.match(raw, /^Content-Type: multipart\/alternative;/m)
    const parsed = await simpleParser(raw)
    assert.strictEqual(parsed.attachments[0]?.contentDisposition, "attachment")
    assert.deepStrictEqual(new Uint8Array(parsed.attachments[0]?.content ?? []), pdf)
  })

  it("every attachment, a message/rfc822 one included, is base64 with an attachment disposition", async () => {
    const dir = freshDir()
    const provider = await outbox({ dir })
    // A forwarded message whose bytes, written raw, would be read as parts of the outer message: its own
    // MIME boundary lines, a bare LF, a 1,000-character line and 8-bit bytes.
    const forwarded = Buffer.concat([
      Buffer.from(
        'From: a@example.com\r\nSubject: inner\r\nContent-Type: multipart/mixed; boundary="inner"\r\n\r\n' +
          "--inner\r\nContent-Type: text/plain\r\n\r\nhello\nbare LF\r\n--inner\r\n" +
          'Content-Type: application/x-msdownload\r\nContent-Disposition: attachment; filename="evil.exe"\r\n\r\nMZ\r\n' +
          `--inner--\r\n${"x".repeat(1000)}\r\n`
      ),
      Buffer.from([0xe9, 0xff, 0x00, 0x0d, 0x0a])
    ])
    const { messageId } = await send(
      provider,
      message({
        attachments: [
          { filename: "forwarded.eml", contentType: "message/rfc822", content: new Uint8Array(forwarded) },
          { filename: "notes.txt", contentType: "text/plain", content: new TextEncoder().encode("notes") }
        ]
      })
    )
    const raw = await readFile(path.join(dir, `${messageId}.eml`))
    const text = raw.toString("latin1")
    // Nothing of the forwarded message is in the file as it is.
    assert.notInclude(text, "--inner")
    assert.notInclude(text, "evil.exe")
    const parts = text
      .split(/\r\n--[^\r\n]+\r\n/)
      .filter((part) => /^Content-Type: (message|text\/plain; name)/im.test(part))
    for (const part of parts) {
      assert.match(part, /^Content-Transfer-Encoding: base64\r$/m)
      assert.match(part, /^Content-Disposition: attachment; filename=/m)
    }
    const parsed = await simpleParser(raw)
    assert.deepStrictEqual(
      parsed.attachments.map((a) => [a.filename, a.contentType, a.contentDisposition]),
      [
        ["forwarded.eml", "message/rfc822", "attachment"],
        ["notes.txt", "text/plain", "attachment"]
      ]
    )
    assert.deepStrictEqual(Buffer.from(parsed.attachments[0]?.content ?? []), forwarded)
  })

  it("paused: SendingPaused (not permanent), and nothing is written", async () => {
    const dir = freshDir()
    const provider = await outbox({ dir, paused: true })
    const error = await failure(provider, message())
    assert.strictEqual(error._tag, "ProviderError")
    assert.strictEqual(error.provider, "outbox")
    assert.strictEqual(error.reason._tag, "SendingPaused")
    assert.isFalse((error.reason as ProviderError.SendingPaused).permanent)
    assert.isFalse(error.isRetryable)
    assert.deepStrictEqual(await filesIn(dir), [])
  })

  it("sandbox: unverified recipients (to, cc or bcc) give RecipientNotVerified naming them, and nothing is written", async () => {
    const dir = freshDir()
    const provider = await outbox({
      dir,
      sandbox: { enabled: true, verifiedRecipients: ["alice@example.com", "Carol@Example.com"] }
    })
    const error = await failure(
      provider,
      message({ to: ["Alice@Example.com", "bob@example.com"], cc: ["carol@example.com"], bcc: ["dave@example.com"] })
    )
    assert.strictEqual(error.reason._tag, "RecipientNotVerified")
    const reason = error.reason as ProviderError.RecipientNotVerified
    assert.deepStrictEqual(reason.recipients, ["bob@example.com", "dave@example.com"])
    assert.include(reason.message, "bob@example.com")
    assert.include(reason.message, "dave@example.com")
    assert.deepStrictEqual(await filesIn(dir), [])

    // Verified recipients, in any case, are delivered.
    const { messageId } = await send(provider, message({ to: ["ALICE@example.com"], cc: ["carol@example.com"] }))
    assert.deepStrictEqual(await filesIn(dir), [`${messageId}.eml`])
  })

  it("a disabled sandbox lets every recipient through", async () => {
    const provider = await outbox({
      dir: freshDir(),
      sandbox: { enabled: false, verifiedRecipients: [] }
    })
    await send(provider, message({ to: ["anyone@example.com"] }))
  })

  it("declares the strictest vendor limits and acts them out, writing nothing", async () => {
    const dir = freshDir()
    const provider = await outbox({ dir })
    assert.deepStrictEqual(provider.limits, OutboxEmailProvider.limits)
    assert.strictEqual(provider.limits.maxRecipients, 50)
    assert.strictEqual(provider.limits.maxMessageBytes, 10_000_000)
    // Postmark's list and SES's list both apply.
    for (const extension of ["exe", "bin", "vba", "js", "ps1", "tmp"]) {
      assert.include(provider.limits.forbiddenExtensions, extension)
    }
    const tooMany = await failure(
      provider,
      message({
        to: Array.from({ length: 30 }, (_, i) => `to${i}@example.com`),
        bcc: Array.from({ length: 21 }, (_, i) => `b${i}@example.com`)
      })
    )
    assert.strictEqual(tooMany.reason._tag, "InvalidRequest")
    const forbidden = await failure(
      provider,
      message({
        attachments: [{ filename: "setup.EXE", contentType: "application/octet-stream", content: new Uint8Array(1) }]
      })
    )
    assert.strictEqual(forbidden.reason._tag, "InvalidRequest")
    assert.include(forbidden.message, "setup.EXE")
    const small = await outbox({ dir, limits: { ...provider.limits, maxMessageBytes: 10_000 } })
    const large = await failure(
      small,
      message({
        attachments: [{ filename: "a.dat", contentType: "application/octet-stream", content: new Uint8Array(8_000) }]
      })
    )
    assert.strictEqual(large.reason._tag, "MessageTooLarge")
    assert.deepStrictEqual(await filesIn(dir), [])
  })

  it("custom headers keep their names' case and are folded; tags are X-Mailroom-Tag- headers, names as sent", async () => {
    const dir = freshDir()
    const provider = await outbox({ dir })
    const tags = [
      { name: "category", value: "receipt" },
      { name: "Order_ID", value: "ord-42" }
    ]
    const { messageId } = await send(
      provider,
      message({
        headers: [
          { name: "X-MyApp-ID", value: "Été 2026 — 日本語" },
          { name: "X-Plain", value: "=?utf-8?q?x?= stays text" }
        ],
        tags
      })
    )
    const raw = await readFile(path.join(dir, `${messageId}.eml`))
    const { rawHeaders, headers } = headerSection(raw)
    assert.match(rawHeaders, /^X-MyApp-ID: =\?UTF-8\?[BQ]\?/m)
    assert.match(rawHeaders, /^X-Mailroom-Tag-Order_ID: ord-42\r$/m)
    // A reader decodes the encoded-words back to the text sent.
    const value = (name: string) => libmime.decodeWords(headers.find((h) => h.name === name)?.value ?? "")
    assert.strictEqual(value("X-MyApp-ID"), "Été 2026 — 日本語")
    assert.strictEqual(value("X-Plain"), "=?utf-8?q?x?= stays text")
    assert.deepStrictEqual(prefixed(headers, "X-Mailroom-Tag-"), tags)
  })

  it("refuses headers and tags SES or Postmark would refuse, or a line could not hold, writing nothing", async () => {
    const dir = freshDir()
    const provider = await outbox({ dir })
    assert.strictEqual(provider.limits.maxCustomHeaders, 15)
    assert.strictEqual(provider.limits.maxTags, 8)
    assert.include(provider.limits.forbiddenHeaders ?? [], "Return-Path")
    const header = (name: string, value = "x") => ({ name, value })
    const tags = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `tag${i}`, value: "v" }))
    const cases: ReadonlyArray<readonly [Partial<EmailProvider.OutboundEmail>, string]> = [
      [{ headers: Array.from({ length: 16 }, (_, i) => header(`X-Header-${i}`)) }, "at most 15"],
      [{ headers: [header("return-path", "<bounce@acme.example>")] }, "return-path"],
      [{ headers: [header("X-Mailroom-Organization", "org_other")] }, "X-Mailroom-Organization"],
      [{ headers: [header("X-Empty", " ")] }, "X-Empty"],
      [{ headers: [header("List-Unsubscribe", `<https://acme.example/${"u".repeat(1_000)}>`)] }, "List-Unsubscribe"],
      [{ tags: tags(9) }, "at most 8 tags"],
      [
        {
          tags: [
            { name: "Env", value: "prod" },
            { name: "env", value: "test" }
          ]
        },
        "env"
      ]
    ]
    for (const [parts, named] of cases) {
      const error = await failure(provider, message(parts))
      assert.strictEqual(error.reason._tag, "InvalidRequest")
      assert.include(error.message, named)
    }
    assert.deepStrictEqual(await filesIn(dir), [])
  })

  it("an inline part is multipart/related with the HTML, Content-ID and Content-Disposition: inline", async () => {
    const dir = freshDir()
    const provider = await outbox({ dir })
    const { messageId } = await send(
      provider,
      message({
        html: '<p><img src="cid:chart"></p>',
        attachments: [
          // Not an image: the composer would make it a download unless told.
          {
            filename: "chart.svg",
            contentType: "image/svg+xml",
            content: new TextEncoder().encode("<svg/>"),
            contentId: "chart"
          },
          {
            filename: "data.csv",
            contentType: "text/csv",
            content: new TextEncoder().encode("a,b\n"),
            contentId: "data"
          }
        ]
      })
    )
    const raw = await readFile(path.join(dir, `${messageId}.eml`), "utf8")
    assert.match(raw, /^Content-Type: multipart\/related;/m)
    assert.match(raw, /^Content-ID: <chart>\r$/m)
    assert.match(raw, /^Content-ID: <data>\r$/m)
    assert.strictEqual(raw.match(/^Content-Disposition: inline;/gm)?.length, 2)
  })

  it("files are written atomically: a reader never sees a partial .eml, and no temporary file stays", async () => {
    const dir = freshDir()
    const provider = await outbox({ dir })
    const seen = new Map<string, Buffer>()
    let sending = true
    // Reads every .eml as soon as it appears, while 20 large messages are written, 5 at once: the
    // first files are there while the later ones are written, whatever the machine's load.
    const watcher = (async () => {
      while (sending) {
        for (const name of await filesIn(dir)) {
          if (name.endsWith(".eml") && !seen.has(name)) seen.set(name, await readFile(path.join(dir, name)))
        }
        await new Promise((resolve) => setImmediate(resolve))
      }
    })()
    const ids: Array<{ readonly messageId: string }> = []
    for (let wave = 0; wave < 4; wave++) {
      ids.push(
        ...(await Promise.all(
          Array.from({ length: 5 }, () =>
            send(
              provider,
              message({
                attachments: [
                  {
                    filename: "big.dat",
                    contentType: "application/octet-stream",
                    content: new Uint8Array(randomBytes(400_000))
                  }
                ]
              })
            )
          )
        ))
      )
    }
    sending = false
    await watcher
    const files = await filesIn(dir)
    assert.deepStrictEqual(files, ids.map(({ messageId }) => `${messageId}.eml`).sort())
    assert.isAbove(seen.size, 0)
    for (const [name, early] of seen) {
      assert.isTrue(early.equals(await readFile(path.join(dir, name))), `${name} was seen half-written`)
    }
  })

  it("a directory it cannot write to is an Unknown ProviderError", async () => {
    const file = path.join(base, "not-a-directory")
    await writeFile(file, "x")
    const error = await failure(await outbox({ dir: file }), message())
    assert.strictEqual(error.reason._tag, "Unknown")
    assert.isFalse(error.isRetryable)
    assert.isDefined(error.cause)
  })

  it("layerConfig reads the options from Config", async () => {
    const dir = freshDir()
    const layer = OutboxEmailProvider.layerConfig({
      dir: Config.String("OUTBOX_DIR"),
      paused: Config.Boolean("OUTBOX_PAUSED")
    })
    const error = await Effect.runPromise(
      Effect.flatMap(EmailProvider.EmailProvider, (provider) => Effect.flip(provider.send(message()))).pipe(
        Effect.provide(layer),
        Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ OUTBOX_DIR: dir, OUTBOX_PAUSED: "true" })))
      )
    )
    assert.strictEqual(error.reason._tag, "SendingPaused")
  })

  it("make and layer refuse an empty dir and limits that are not whole numbers above zero, naming the option", async () => {
    const limits = OutboxEmailProvider.limits
    const refusals: ReadonlyArray<readonly [OutboxEmailProvider.Options, ReadonlyArray<string>]> = [
      [{ dir: "" }, ["dir"]],
      [{ dir: freshDir(), limits: { ...limits, maxRecipients: 0 } }, ["limits", "maxRecipients"]],
      [{ dir: freshDir(), limits: { ...limits, maxMessageBytes: -1 } }, ["limits", "maxMessageBytes"]],
      [{ dir: freshDir(), limits: { ...limits, maxTags: 0 } }, ["limits", "maxTags"]],
      [{ dir: freshDir(), limits: { ...limits, maxCustomHeaders: 1.5 } }, ["limits", "maxCustomHeaders"]],
      [{ dir: freshDir(), simulatedDelay: "soon" as never }, ["simulatedDelay"]],
      [{ dir: freshDir(), simulatedDelay: 0 }, ["simulatedDelay"]]
    ]
    for (const [options, option] of refusals) {
      await Effect.runPromise(expectConfigError(OutboxEmailProvider.make(options), option))
      await Effect.runPromise(expectConfigError(OutboxEmailProvider.layer(options), option))
    }
  })

  it("layerConfig fails with a ConfigError naming a limit that was read but is unusable", async () => {
    const layer = OutboxEmailProvider.layerConfig({
      dir: Config.String("OUTBOX_DIR"),
      limits: {
        maxRecipients: Config.Number("OUTBOX_MAX_RECIPIENTS"),
        maxMessageBytes: Config.succeed(OutboxEmailProvider.limits.maxMessageBytes),
        forbiddenExtensions: Config.succeed(OutboxEmailProvider.limits.forbiddenExtensions)
      }
    })
    await Effect.runPromise(
      expectConfigError(layer, ["limits", "maxRecipients"]).pipe(
        Effect.provide(
          ConfigProvider.layer(ConfigProvider.fromUnknown({ OUTBOX_DIR: freshDir(), OUTBOX_MAX_RECIPIENTS: "0" }))
        )
      )
    )
  })
})

describe("OutboxEmailProvider on a TestClock", () => {
  effectIt.effect("the Date of each message is the Clock's time", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      yield* TestClock.setTime(Date.parse("2031-02-03T04:05:06Z"))
      const provider = yield* OutboxEmailProvider.make({ dir })
      const { messageId } = yield* provider.send(message())
      const parsed = yield* Effect.promise(async () => simpleParser(await readFile(path.join(dir, `${messageId}.eml`))))
      assert.strictEqual(parsed.date?.toISOString(), "2031-02-03T04:05:06.000Z")
    })
  )
})
