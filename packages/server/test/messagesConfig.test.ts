// The config's `messages` section: its defaults (SQLite beside the local store, or beside the config
// file with S3/GCS), each kind's fields, and every mistake named by its field, never echoing a password.
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { Server, ServerConfig } from "../src/index.js"

const base = {
  serviceDomain: "mailroom.test",
  organizations: [{ id: "org_acme", slug: "acme", apiKeys: ["mr_test_acme"] }],
  storage: { kind: "local", dir: "data/storage", signingSecret: "x" },
  provider: { kind: "outbox", dir: "outbox" }
}
const s3 = { kind: "s3", bucket: "attachments", region: "eu-west-1" }
const baseDir = "/srv/mailroom"

const parse = (extra: Record<string, unknown>, env: Record<string, string> = {}) =>
  ServerConfig.parse({ ...base, ...extra }, { baseDir, env })

const problems = (extra: Record<string, unknown>, env: Record<string, string> = {}): ReadonlyArray<string> => {
  try {
    parse(extra, env)
  } catch (error) {
    return (error as ServerConfig.ServerConfigError).problems
  }
  throw new Error("the config was accepted")
}

describe("ServerConfig: the messages section", () => {
  it("absent: SQLite as mailroom.db beside the local store's directory, kept 30 days", () => {
    assert.deepStrictEqual(parse({}).messages, {
      kind: "sqlite",
      path: join(baseDir, "data", "mailroom.db"),
      retention: "30 days"
    })
  })

  it("absent with S3 or GCS storage: SQLite at .mailroom/mailroom.db beside the config file", () => {
    const path = join(baseDir, ".mailroom", "mailroom.db")
    assert.deepStrictEqual(parse({ storage: s3 }).messages, { kind: "sqlite", path, retention: "30 days" })
    assert.deepStrictEqual(parse({ storage: { kind: "gcs", bucket: "b" } }).messages, {
      kind: "sqlite",
      path,
      retention: "30 days"
    })
  })

  it("each kind with its own fields: a path resolved against the config's folder, a URL from the file or DATABASE_URL", () => {
    assert.deepStrictEqual(
      parse({ messages: { kind: "sqlite", path: "db/records.db", retention: "7 days" } }).messages,
      {
        kind: "sqlite",
        path: join(baseDir, "db", "records.db"),
        retention: "7 days"
      }
    )
    assert.deepStrictEqual(parse({ messages: { kind: "sqlite", path: "/var/lib/mailroom.db" } }).messages, {
      kind: "sqlite",
      path: "/var/lib/mailroom.db",
      retention: "30 days"
    })
    assert.deepStrictEqual(parse({ messages: { kind: "memory", retention: "12 hours" } }).messages, {
      kind: "memory",
      retention: "12 hours"
    })
    const url = "postgres://mailroom:secret@db.internal:5432/app"
    assert.deepStrictEqual(parse({ messages: { kind: "postgres" } }, { DATABASE_URL: url }).messages, {
      kind: "postgres",
      url,
      retention: "30 days"
    })
    assert.deepStrictEqual(
      parse({ messages: { kind: "postgres", url: "postgresql://db.internal/mail" } }, { DATABASE_URL: url }).messages,
      { kind: "postgres", url: "postgresql://db.internal/mail", retention: "30 days" }
    )
  })

  it("the queue of scheduled sends: its worker's concurrency, lock expiry and poll interval, each checked", () => {
    const queue = { concurrency: 4, lockExpiration: "10 seconds", pollInterval: "500 millis" }
    assert.deepStrictEqual(parse({ messages: { kind: "sqlite", path: "/var/lib/m.db", queue } }).messages, {
      kind: "sqlite",
      path: "/var/lib/m.db",
      retention: "30 days",
      queue
    })
    assert.deepStrictEqual(parse({ messages: { kind: "memory", queue: { concurrency: 2 } } }).messages, {
      kind: "memory",
      retention: "30 days",
      queue: { concurrency: 2 }
    })
    assert.deepStrictEqual(
      problems({ messages: { kind: "sqlite", queue: { concurrency: 0, lockExpiration: "soon", every: 1 } } }),
      [
        "messages.queue.every: is not a known field",
        "messages.queue.concurrency: must be a whole number from 1 to 1000",
        'messages.queue.lockExpiration: must be a duration above zero such as "30 days" or "12 hours"'
      ]
    )
    assert.deepStrictEqual(problems({ messages: { kind: "memory", queue: { lockExpiration: "1 minute" } } }), [
      "messages.queue.lockExpiration: is not a known field"
    ])
    // A worker per unit starts with the server: a million of them hung start-up, saying nothing.
    assert.deepStrictEqual(problems({ messages: { kind: "memory", queue: { concurrency: 1_000_000 } } }), [
      "messages.queue.concurrency: must be a whole number from 1 to 1000"
    ])
  })

  it("an unknown kind or field, a bad retention, a missing or wrong URL: each named, no password repeated", () => {
    assert.deepStrictEqual(problems({ messages: { kind: "mysql" } }), [
      "messages.kind: must be one of memory, sqlite, postgres"
    ])
    assert.deepStrictEqual(problems({ messages: "sqlite" }), ["messages.kind: must be one of memory, sqlite, postgres"])
    assert.deepStrictEqual(problems({ messages: { kind: "sqlite", url: "postgres://h/db", retain: "1 day" } }), [
      "messages.url: is not a known field",
      "messages.retain: is not a known field"
    ])
    assert.deepStrictEqual(problems({ messages: { kind: "memory", path: "x.db" } }), [
      "messages.path: is not a known field"
    ])
    assert.deepStrictEqual(problems({ messages: { kind: "sqlite", path: " " } }), [
      "messages.path: a file path must not be empty"
    ])
    for (const retention of ["0 days", "forever", "30", "-1 hours", 30]) {
      const found = problems({ messages: { kind: "sqlite", retention } })
      assert.strictEqual(found.length, 1, JSON.stringify(found))
      assert.match(found[0] ?? "", /^messages\.retention: /, String(retention))
    }
    assert.deepStrictEqual(problems({ messages: { kind: "postgres" } }), [
      "messages.url: is required, or set the DATABASE_URL environment variable"
    ])
    assert.deepStrictEqual(problems({ messages: { kind: "postgres", url: "mysql://mailroom:hunter2@db/app" } }), [
      "messages.url: must be a postgres:// or postgresql:// URL"
    ])
    assert.deepStrictEqual(
      problems({ messages: { kind: "postgres" } }, { DATABASE_URL: "mysql://mailroom:hunter2@db/app" }),
      ["DATABASE_URL: must be a postgres:// or postgresql:// URL"]
    )
  })
})

describe("Server.start with a messages database that cannot be opened", () => {
  it("stops start-up with a ServerConfigError naming messages.path", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mailroom-messages-config-"))
    try {
      await writeFile(join(dir, "not-a-directory"), "")
      const config = ServerConfig.parse(
        { ...base, port: 0, messages: { kind: "sqlite", path: "not-a-directory/mailroom.db" } },
        { baseDir: dir }
      )
      const error = await Server.start(config, { log: () => {} }).then(
        (running) => running.close().then(() => undefined),
        (cause: unknown) => cause
      )
      assert.isTrue(ServerConfig.isServerConfigError(error), String(error))
      const [problem] = (error as ServerConfig.ServerConfigError).problems
      assert.match(
        problem ?? "",
        new RegExp(
          `^messages\\.path: cannot open the SQLite database at ${join(dir, "not-a-directory", "mailroom.db")}: `
        )
      )
    } finally {
      // The storage and outbox folders are made beside the database while it fails to open: a mkdir
      // already on the thread pool may land after start-up has failed, as rm walks the folder.
      await rm(dir, { recursive: true, force: true, maxRetries: 5 })
    }
  })
})

describe("ServerConfig.load: the file itself", () => {
  it("reads a file an editor saved with a byte-order mark; says JSON has no comments", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mailroom-load-"))
    try {
      const config = JSON.stringify({ ...base, messages: { kind: "memory" } })
      const withBom = join(dir, "bom.json")
      await writeFile(withBom, `\ufeff${config}`)
      assert.strictEqual((await ServerConfig.load(withBom)).messages.kind, "memory")
      const commented = join(dir, "commented.json")
      await writeFile(commented, `{\n  // the API keys\n${config.slice(1)}`)
      const refused = await ServerConfig.load(commented).then(
        () => undefined,
        (error: unknown) => (ServerConfig.isServerConfigError(error) ? error.problems : [String(error)])
      )
      assert.lengthOf(refused ?? [], 1)
      assert.match(refused?.[0] ?? "", /^is not valid JSON: .*\(JSON has no comments: remove them\)$/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
