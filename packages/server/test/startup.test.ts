// The `mailroom` command, as a user starts it, with a dependency it cannot use: SES without credentials,
// Redis, PostgreSQL, S3 or Postmark on a closed port, GCS without credentials, a port already taken.
// Each stops within 10 s, exit 1, naming the config field and the cause: no stack, no password.
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { run } from "./process.js"

const password = "hunter2-startup"
const local = { kind: "local", dir: "storage", signingSecret: "startup-secret" }
const outbox = { kind: "outbox", dir: "outbox" }

describe("a dependency the config names cannot be used at start-up", () => {
  let dir: string
  /** No credentials anywhere the AWS and Google SDKs look: environment, profiles, the home directory. */
  let bare: Record<string, string>
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-startup-"))
    bare = {
      HOME: dir,
      AWS_ACCESS_KEY_ID: "",
      AWS_SECRET_ACCESS_KEY: "",
      AWS_SESSION_TOKEN: "",
      AWS_PROFILE: "",
      AWS_CONFIG_FILE: join(dir, "no-aws-config"),
      AWS_SHARED_CREDENTIALS_FILE: join(dir, "no-aws-credentials"),
      AWS_WEB_IDENTITY_TOKEN_FILE: "",
      AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: "",
      AWS_CONTAINER_CREDENTIALS_FULL_URI: "",
      GOOGLE_APPLICATION_CREDENTIALS: "",
      CLOUDSDK_CONFIG: join(dir, "no-gcloud")
    }
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  /** Starts the command on a config of `sections`; answers what it printed once it exited, and how fast. */
  const refused = async (name: string, sections: Record<string, unknown>, env: Record<string, string> = {}) => {
    const path = join(dir, `${name}.json`)
    await writeFile(
      path,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test"] }],
        storage: local,
        provider: outbox,
        ...sections
      })
    )
    const started = Date.now()
    const server = run(path, { ...bare, ...env })
    // A server that starts after all is stopped here, not left running once the test has failed.
    let timer: NodeJS.Timeout | undefined
    const code = await Promise.race([
      server.exited,
      new Promise<"running">((resolve) => {
        timer = setTimeout(() => resolve("running"), 25_000)
      })
    ])
    clearTimeout(timer)
    if (code === "running") server.child.kill("SIGKILL")
    const took = Date.now() - started
    const { stdout, stderr } = server.output()
    const output = `${stdout}${stderr}`
    assert.strictEqual(code, 1, output)
    // Within 10 s on an idle machine: at most the 5 s each dependency is given, plus Node loading the
    // command and the dependency's SDK, which takes seconds more on a loaded one. Twice that still
    // fails a server that waits on a driver's own retries (minutes) or for ever.
    assert.isAtMost(took, 20_000, `exited after ${took} ms:\n${output}`)
    assert.notMatch(output, /^\s+at /m, `a stack trace:\n${output}`)
    assert.notInclude(output, password)
    return { output, path }
  }

  it("SES with no credentials names provider.accessKeyId and says none were found", async () => {
    const { output } = await refused("ses", { provider: { kind: "ses", region: "eu-west-1" } })
    assert.match(output, /provider\.accessKeyId: no AWS credentials were found/)
    assert.include(output, "Could not load credentials from any providers")
  })

  it("Redis on a closed port names idempotency.url and the refused connection", async () => {
    const port = await freePort()
    const { output } = await refused("redis", {
      idempotency: { kind: "redis", url: `redis://:${password}@127.0.0.1:${port}` }
    })
    assert.include(output, `idempotency.url: Redis at redis://127.0.0.1:${port} cannot be reached`)
    assert.include(output, "ECONNREFUSED")
  })

  it("PostgreSQL on a closed port names organizations.url and the refused connection", async () => {
    const port = await freePort()
    const { output } = await refused("postgres", {
      organizations: { kind: "postgres", url: `postgres://mailroom:${password}@127.0.0.1:${port}/app` }
    })
    assert.include(output, "organizations.url: the database cannot be reached")
    assert.include(output, `ECONNREFUSED 127.0.0.1:${port}`)
  })

  it("the messages' PostgreSQL on a closed port names messages, without a stack", async () => {
    const port = await freePort()
    const { output } = await refused("messages-postgres", {
      messages: { kind: "postgres", url: `postgres://mailroom:${password}@127.0.0.1:${port}/app` }
    })
    assert.match(output, /messages(\.url)?: |message tables/)
    assert.notInclude(output, "SqlError")
  })

  it("S3 on a closed port names storage.endpoint and the refused connection", async () => {
    const port = await freePort()
    const { output } = await refused("s3", {
      storage: {
        kind: "s3",
        bucket: "attachments",
        region: "us-east-1",
        endpoint: `http://127.0.0.1:${port}`,
        forcePathStyle: true,
        accessKeyId: "AKIDSTARTUP",
        secretAccessKey: password
      }
    })
    assert.match(output, /storage\.endpoint: .*ECONNREFUSED/)
  })

  it("GCS with no credentials names storage.keyFilename and says none were found", async () => {
    const { output } = await refused("gcs", { storage: { kind: "gcs", bucket: "attachments" } })
    assert.match(output, /storage\.keyFilename: no Google Cloud credentials were found/)
    assert.notInclude(output, "did not answer")
  })

  it("Postmark on a closed port names provider.requestHost and the refused connection", async () => {
    const port = await freePort()
    const { output } = await refused("postmark", {
      provider: { kind: "postmark", serverToken: password, requestHost: `127.0.0.1:${port}`, useHttps: false }
    })
    assert.include(output, `provider.requestHost: Postmark at 127.0.0.1:${port} could not be reached (ECONNREFUSED)`)
  })

  it("SMTP on a closed port names provider.host and the refused connection", async () => {
    const port = await freePort()
    const { output } = await refused("smtp", { provider: { kind: "smtp", host: "127.0.0.1", port } })
    assert.match(output, new RegExp(`provider\\.host: .*127\\.0\\.0\\.1:${port}.*ECONNREFUSED`))
  })

  it("a key file that cannot be read is named with the config file's path, not 'config'", async () => {
    const missing = join(dir, "no-such-key.json")
    const { output, path } = await refused("keyfile", {
      storage: { kind: "gcs", bucket: "attachments", keyFilename: missing }
    })
    assert.include(output, `${path} is not a valid mailroom config:`)
    assert.include(output, "storage.keyFilename: cannot be read (ENOENT)")
  })

  it("a port already in use is named, with how to choose another", async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    const port = (taken.address() as { port: number }).port
    try {
      const { output } = await refused("port", {}, { PORT: String(port) })
      assert.include(output, `port: ${port} is already in use on 127.0.0.1`)
      assert.match(output, /PORT=\d+/)
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()))
    }
  })
})
