import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { simpleParser } from "mailparser"
import { afterAll, afterEach, assert, beforeAll, describe, it } from "vitest"
import { Server, ServerConfig } from "../src/index.js"

const organizations = [
  {
    id: "org_acme",
    slug: "acme",
    verifiedDomains: ["acme.example"],
    apiKeys: ["mr_test_acme"],
    accessTokens: ["tok_acme"]
  },
  { id: "org_globex", slug: "globex", apiKeys: ["mr_test_globex"] }
]

const configFor = (dir: string, provider: Record<string, unknown> = {}) =>
  ServerConfig.parse(
    {
      port: 0,
      serviceDomain: "mailroom.test",
      organizations,
      storage: { kind: "local", dir: "storage", signingSecret: "test-secret" },
      provider: { kind: "outbox", dir: "outbox", ...provider }
    },
    { baseDir: dir, source: "test config" }
  )

const filesUnder = async (dir: string): Promise<ReadonlyArray<string>> => {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name))
}

describe("the standalone server on the embedded defaults", () => {
  let dir: string
  let server: Server.RunningServer
  const lines: Array<string> = []
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-server-"))
    server = await Server.start(configFor(dir), {
      log: (line) => lines.push(line),
      logError: (line) => lines.push(line)
    })
  })
  afterAll(async () => {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  })

  const api = async (method: string, path: string, body?: unknown, key = "mr_test_acme") => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }

  it("presign -> PUT -> send -> the .eml holds everything -> download -> delete -> 404", async () => {
    const content = Buffer.concat([
      Buffer.from("%PDF-1.7\n"),
      Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 256))
    ])
    const presigned = await api("POST", "/attachments/presign", {
      filename: "Relevé août.pdf",
      content_type: "application/pdf"
    })
    assert.strictEqual(presigned.status, 201)
    const { url, key } = presigned.body as { url: string; key: string }
    assert.isTrue(url.startsWith(`${server.url}/_mailroom/storage/`), url)
    const put = await fetch(url, { method: "PUT", headers: { "content-type": "application/pdf" }, body: content })
    assert.strictEqual(put.status, 200, await put.text())

    const sent = await api("POST", "/emails", {
      from: "billing@acme.example",
      from_name: "Zoë from Açme",
      to: ["alice@example.com", "bob@example.com"],
      cc: ["carol@example.com"],
      bcc: ["secret-dave@example.com"],
      reply_to: ["help@acme.example"],
      subject: "Votre facture n° 42 — merci ✔",
      body: { text: "Voici votre facture.", html: "<p>Voici votre <b>facture</b>.</p>" },
      attachments: [{ filename: "facture.pdf", key }]
    })
    assert.strictEqual(sent.status, 201, JSON.stringify(sent.body))
    const messageId = String(sent.body.message_id)
    assert.deepStrictEqual(sent.body.attachments, [key])

    const raw = await readFile(join(dir, "outbox", `${messageId}.eml`))
    assert.notMatch(raw.toString("latin1"), /^bcc:/im, "a Bcc header reached the message")
    const parsed = await simpleParser(raw)
    assert.strictEqual(parsed.from?.value[0]?.name, "Zoë from Açme")
    assert.strictEqual(parsed.from?.value[0]?.address, "billing@acme.example")
    const addresses = (field: typeof parsed.to) =>
      (Array.isArray(field) ? field : field === undefined ? [] : [field]).flatMap((a) => a.value.map((v) => v.address))
    assert.deepStrictEqual(addresses(parsed.to), ["alice@example.com", "bob@example.com"])
    assert.deepStrictEqual(addresses(parsed.cc), ["carol@example.com"])
    assert.strictEqual(parsed.subject, "Votre facture n° 42 — merci ✔")
    assert.strictEqual(parsed.text?.trim(), "Voici votre facture.")
    assert.strictEqual(parsed.html ? parsed.html.trim() : "", "<p>Voici votre <b>facture</b>.</p>")
    assert.include(String(parsed.messageId), messageId)
    assert.strictEqual(parsed.attachments.length, 1)
    assert.strictEqual(parsed.attachments[0]?.filename, "facture.pdf")
    assert.strictEqual(parsed.attachments[0]?.contentType, "application/pdf")
    assert.isTrue(parsed.attachments[0]?.content.equals(content), "the attachment's bytes differ")

    const download = await api("GET", `/attachments/download?key=${encodeURIComponent(key)}`)
    assert.strictEqual(download.status, 200)
    const fetched = await fetch(String(download.body.download_url))
    assert.strictEqual(fetched.headers.get("content-type"), "application/pdf")
    assert.isTrue(Buffer.from(await fetched.arrayBuffer()).equals(content))

    assert.deepStrictEqual((await api("DELETE", `/attachments/delete?key=${encodeURIComponent(key)}`)).body, {
      deleted: true,
      key
    })
    const gone = await api("GET", `/attachments/download?key=${encodeURIComponent(key)}`)
    assert.strictEqual(gone.status, 404)
    assert.deepStrictEqual(gone.body, { message: `attachment not found: ${key}` })
  })

  it("tampered, expired, wrong-type and wrong-key uploads are refused and leave nothing on disk", async () => {
    const before = await filesUnder(join(dir, "storage"))
    const presigned = await api("POST", "/attachments/presign", { filename: "a.txt", content_type: "text/plain" })
    const { url, key } = presigned.body as { url: string; key: string }
    const other = (await api("POST", "/attachments/presign", { filename: "b.txt", content_type: "text/plain" }))
      .body as { key: string }
    const signed = new URL(url)
    const tampered = new URL(url)
    tampered.searchParams.set("signature", `${signed.searchParams.get("signature")?.slice(0, -2)}00`)
    const expired = new URL(url)
    expired.searchParams.set("expires", String(Math.floor(Date.now() / 1000) - 10))
    const elsewhere = new URL(
      url.replace(
        encodeURIComponent(key.split("/").at(-1) ?? ""),
        encodeURIComponent(other.key.split("/").at(-1) ?? "")
      )
    )
    const attempts: ReadonlyArray<readonly [string, string, string]> = [
      ["tampered signature", tampered.toString(), "text/plain"],
      ["expired", expired.toString(), "text/plain"],
      ["another Content-Type", url, "text/html"],
      ["another key", elsewhere.toString(), "text/plain"]
    ]
    for (const [what, target, type] of attempts) {
      const response = await fetch(target, {
        method: "PUT",
        headers: { "content-type": type },
        body: "<script>x</script>"
      })
      assert.strictEqual(response.status, 403, what)
      assert.property((await response.json()) as object, "message", what)
    }
    // Presign writes nothing, and no refused upload left a file.
    assert.deepStrictEqual(await filesUnder(join(dir, "storage")), before)
  })

  it("logs one line per request: method, path, status, time; never a credential", async () => {
    await api("GET", "/attachments/download?key=attachments/org_acme/1-x.pdf", undefined, "mr_test_acme")
    const line = lines.filter((l) => l.startsWith("GET /attachments/download ")).at(-1) ?? ""
    assert.match(line, /^GET \/attachments\/download 404 [0-9.]+ms$/)
    assert.notInclude(lines.join("\n"), "mr_test_acme")
    assert.notInclude(lines.join("\n"), "test-secret")
  })

  it("logs a path with a parameter as its template: an address or a message id stays out of the log", async () => {
    const sent = await api("POST", "/emails", {
      from: "hello@acme.example",
      to: ["alice@example.com"],
      subject: "Logged",
      body: { text: "x" }
    })
    const id = String(sent.body.message_id)
    assert.strictEqual((await api("GET", `/emails/${id}`)).status, 200)
    assert.strictEqual((await api("POST", "/suppressions", { email: "secret.person@example.com" })).status, 201)
    assert.strictEqual((await api("DELETE", "/suppressions/secret.person%40example.com")).status, 200)
    assert.match(lines.filter((l) => l.startsWith("GET /emails/")).at(-1) ?? "", /^GET \/emails\/\{id\} 200 /)
    assert.match(lines.filter((l) => l.startsWith("DELETE ")).at(-1) ?? "", /^DELETE \/suppressions\/\{email\} 200 /)
    assert.notInclude(lines.join("\n"), id)
    assert.notInclude(lines.join("\n"), "secret.person")
  })

  it("logs the local store's routes without the key: a file name stays out of the log", async () => {
    const presigned = await api("POST", "/attachments/presign", { filename: "jane.doe-passport.pdf" })
    const { url, key } = presigned.body as { url: string; key: string }
    const put = await fetch(url, { method: "PUT", headers: { "content-type": "application/octet-stream" }, body: "x" })
    assert.strictEqual(put.status, 200, await put.text())
    const download = await api("GET", `/attachments/download?key=${encodeURIComponent(key)}`)
    const got = await fetch(String(download.body.download_url))
    assert.strictEqual(await got.text(), "x")
    assert.match(
      lines.filter((l) => l.startsWith("PUT /_mailroom/")).at(-1) ?? "",
      /^PUT \/_mailroom\/storage\/\* 200 /
    )
    assert.match(
      lines.filter((l) => l.startsWith("GET /_mailroom/")).at(-1) ?? "",
      /^GET \/_mailroom\/storage\/\* 200 /
    )
    assert.notInclude(lines.join("\n"), "jane.doe")
  })
})

describe("provider states acted out by the outbox", () => {
  const started: Array<{ server: Server.RunningServer; dir: string }> = []
  afterEach(async () => {
    for (const { server, dir } of started.splice(0)) {
      await server.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
  const startWith = async (provider: Record<string, unknown>) => {
    const dir = await mkdtemp(join(tmpdir(), "mailroom-state-"))
    const server = await Server.start(configFor(dir, provider), { log: () => {} })
    started.push({ server, dir })
    return { server, dir }
  }
  const send = (url: string, to: ReadonlyArray<string>) =>
    fetch(`${url}/emails`, {
      method: "POST",
      headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
      body: JSON.stringify({ from: "a@acme.example", to, subject: "Hi", body: { text: "x" } })
    })

  it("sandbox: an unverified recipient is 422 {error}; a verified one is sent", async () => {
    const { server, dir } = await startWith({ sandbox: { enabled: true, verifiedRecipients: ["ok@example.com"] } })
    const refused = await send(server.url, ["ok@example.com", "stranger@example.com"])
    assert.strictEqual(refused.status, 422)
    const body = (await refused.json()) as { error: string }
    assert.deepStrictEqual(Object.keys(body), ["error"])
    assert.include(body.error, "stranger@example.com")
    assert.deepStrictEqual(await filesUnder(join(dir, "outbox")), [])
    assert.strictEqual((await send(server.url, ["ok@example.com"])).status, 201)
  })

  it("paused: 503 {error, may_have_been_sent: false}", async () => {
    const { server, dir } = await startWith({ paused: true })
    const refused = await send(server.url, ["a@example.com"])
    assert.strictEqual(refused.status, 503)
    assert.deepStrictEqual((await refused.json()) as object, {
      error: "sending is paused on this outbox (paused: true)",
      may_have_been_sent: false
    })
    assert.deepStrictEqual(await filesUnder(join(dir, "outbox")), [])
  })
})

describe("start-up", () => {
  it("a typo in a field name stops start-up with a message naming it", () => {
    assert.throws(
      () =>
        ServerConfig.parse({
          serviceDomain: "mailroom.test",
          organizations,
          storage: { kind: "local", dir: "s", signingSecret: "x", signingSecrte: "y" },
          provider: { kind: "outbox", dir: "o", sandbox: { enabled: true, verifiedRecipient: [] } },
          prot: 3000
        }),
      /prot: is not a known field[\s\S]*storage\.signingSecrte: is not a known field[\s\S]*provider\.sandbox\.verifiedRecipient: is not a known field/
    )
  })

  it("a missing secret, a wrong type or an unknown kind names the field", () => {
    const problems = (input: unknown) => {
      try {
        ServerConfig.parse(input)
      } catch (error) {
        return (error as ServerConfig.ServerConfigError).problems
      }
      return []
    }
    assert.deepStrictEqual(
      problems({
        serviceDomain: "mailroom.test",
        organizations: [],
        storage: { kind: "local", dir: "s" },
        provider: { kind: "outbox", dir: "o" }
      }),
      ["storage.signingSecret: is required"]
    )
    assert.deepStrictEqual(
      problems({
        port: "3000",
        serviceDomain: "mailroom.test",
        organizations: [],
        storage: { kind: "disk" },
        provider: { kind: "postmark" }
      }),
      ["port: must be a number", "storage.kind: must be one of local, s3, gcs", "provider.serverToken: is required"]
    )
  })

  it("an invalid organisation stops start-up with a message naming it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mailroom-bad-"))
    try {
      const config = ServerConfig.parse(
        {
          port: 0,
          serviceDomain: "mailroom.test",
          organizations: [{ id: "org acme", slug: "acme" }],
          storage: { kind: "local", dir: "s", signingSecret: "x" },
          provider: { kind: "outbox", dir: "o" }
        },
        { baseDir: dir }
      )
      let message = ""
      await Server.start(config, { log: () => {} }).catch((error: Error) => {
        message = error.message
      })
      assert.include(message, 'organizations[0].id: must be 1-64 letters, digits, "_" or "-"')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it("a config built in code with a bad publicUrl is refused with the ServerConfigError start documents", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mailroom-bad-"))
    try {
      const error: unknown = await Server.start(
        { ...configFor(dir), publicUrl: "ftp://mailroom.test" },
        { log: () => {} }
      ).then(
        () => undefined,
        (cause: unknown) => cause
      )
      assert.instanceOf(error, ServerConfig.ServerConfigError)
      assert.isTrue(ServerConfig.isServerConfigError(error))
      assert.deepStrictEqual((error as ServerConfig.ServerConfigError).problems, ["publicUrl: must be an http(s) URL"])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it("an option an adapter refuses when it is built is a ServerConfigError naming the config's field", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mailroom-bad-"))
    try {
      const config = configFor(dir)
      const error: unknown = await Server.start(
        { ...config, storage: { ...config.storage, signingSecret: "" } } as ServerConfig.Config,
        { log: () => {} }
      ).then(
        () => undefined,
        (cause: unknown) => cause
      )
      assert.instanceOf(error, ServerConfig.ServerConfigError)
      const problems = (error as ServerConfig.ServerConfigError).problems
      assert.strictEqual(problems.length, 1)
      assert.match(problems[0] ?? "", /^storage\.signingSecret: /)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it("an option an adapter refuses stops start-up as a config problem naming it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mailroom-bad-"))
    try {
      // The file's checks let a query through; the disk store's URLs cannot carry one.
      const config = ServerConfig.parse(
        {
          port: 0,
          publicUrl: "http://127.0.0.1:3000/?tenant=acme",
          serviceDomain: "mailroom.test",
          organizations,
          storage: { kind: "local", dir: "s", signingSecret: "x" },
          provider: { kind: "outbox", dir: "o" }
        },
        { baseDir: dir }
      )
      const error = await Server.start(config, { log: () => {} }).then(
        (running) => running.close().then(() => assert.fail("started")),
        (error: unknown) => error
      )
      assert.instanceOf(error, ServerConfig.ServerConfigError)
      assert.include(error.message, "publicUrl: must not have a query or a fragment")
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it("attachments.requireContentLength: a presign without content_length is a 400 {error}, and the document says so", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mailroom-sized-"))
    const config = ServerConfig.parse(
      {
        port: 0,
        serviceDomain: "mailroom.test",
        organizations,
        storage: { kind: "local", dir: "s", signingSecret: "x" },
        provider: { kind: "outbox", dir: "o" },
        attachments: { requireContentLength: true }
      },
      { baseDir: dir }
    )
    const running = await Server.start(config, { log: () => {} })
    try {
      const presign = (body: unknown) =>
        fetch(`${running.url}/attachments/presign`, {
          method: "POST",
          headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
          body: JSON.stringify(body)
        })
      const refused = await presign({ filename: "a.pdf" })
      assert.strictEqual(refused.status, 400)
      assert.deepStrictEqual(await refused.json(), {
        error: "content_length: is required: upload URLs are issued for a declared size only"
      })
      assert.strictEqual((await presign({ filename: "a.pdf", content_length: 10 })).status, 201)
      const document = (await (await fetch(`${running.url}/openapi.json`)).json()) as {
        components: { schemas: { PresignRequest: { required: Array<string> } } }
      }
      assert.include(document.components.schemas.PresignRequest.required, "content_length")
    } finally {
      await running.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
