// The built `mailroom` command, started from a config file as a user runs it, with each cloud store
// against its test peer: "s3" against Ceph's radosgw, which checks SigV4 signatures as strictly as
// AWS and serves download file names, and "gcs" against the firebase-tools storage emulator, with
// signed URLs checked by the independent V4 verifier. The same flow runs on both.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Redacted, Scope } from "effect"
import { simpleParser } from "mailparser"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { startStorageEmulator } from "../../gcs/test/support/emulator.js"
import { makeServiceAccount } from "../../gcs/test/support/keys.js"
import { makeSignedUrlFetch } from "../../gcs/test/support/signedUrlFetch.js"
import * as Radosgw from "../../s3/test/support/radosgw.js"
import { Server, ServerConfig } from "../src/index.js"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

interface Setup {
  readonly storage: Record<string, unknown>
  /** How a client reaches the store's signed URLs (GCS's endpoint is stood in for by a verifying fetch). */
  readonly fetch: Fetch
  readonly close: () => Promise<void>
}

const setups: Record<string, (dir: string) => Promise<Setup>> = {
  s3: async () => {
    const scope = Effect.runSync(Scope.make())
    const peer = await Effect.runPromise(Scope.provide(scope)(Radosgw.start("mailroom-server")))
    return {
      storage: {
        kind: "s3",
        bucket: peer.bucket,
        region: peer.region,
        endpoint: peer.endpoint,
        forcePathStyle: true,
        ...peer.credentials
      },
      fetch: (input, init) => fetch(input, init),
      close: () => Effect.runPromise(Scope.close(scope, Exit.void))
    }
  },
  gcs: async (dir) => {
    const emulator = await startStorageEmulator()
    const account = makeServiceAccount()
    const keyFilename = join(dir, "service-account.json")
    await writeFile(
      keyFilename,
      JSON.stringify({
        type: "service_account",
        project_id: emulator.projectId,
        client_email: account.credentials.client_email,
        private_key: Redacted.value(account.credentials.private_key)
      })
    )
    return {
      storage: {
        kind: "gcs",
        bucket: "mailroom-attachments",
        projectId: emulator.projectId,
        keyFilename,
        apiEndpoint: emulator.origin
      },
      fetch: makeSignedUrlFetch(emulator, account),
      close: () => emulator.close()
    }
  }
}

for (const [kind, setup] of Object.entries(setups)) {
  describe(`"storage": {"kind": "${kind}"}`, () => {
    let dir: string
    let peer: Setup
    let server: ServerProcess
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), `mailroom-${kind}-`))
      peer = await setup(dir)
      const config = join(dir, "mailroom.config.json")
      await writeFile(
        config,
        JSON.stringify({
          serviceDomain: "mailroom.test",
          organizations: [
            {
              id: "org_acme",
              slug: "acme",
              verifiedDomains: ["acme.example"],
              apiKeys: ["mr_test_acme"],
              accessTokens: ["tok_acme"]
            }
          ],
          storage: peer.storage,
          provider: { kind: "outbox", dir: "outbox" }
        })
      )
      server = await startServer(config)
    }, 60_000)
    afterAll(async () => {
      await server?.stop()
      await peer?.close()
      await rm(dir, { recursive: true, force: true })
    })

    const api = async (method: string, path: string, body?: unknown) => {
      const credential = path.startsWith("/v1/")
        ? { authorization: "Bearer tok_acme" }
        : { "x-api-key": "mr_test_acme" }
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { ...credential, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      return { status: response.status, body: (await response.json()) as Record<string, unknown> }
    }

    /** What a browser following the download URL gets: the bytes, offered under the uploaded name. */
    const downloaded = async (answer: { status: number; body: Record<string, unknown> }) => {
      assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
      const response = await peer.fetch(String(answer.body.download_url))
      assert.strictEqual(response.status, 200, await response.clone().text())
      return {
        disposition: response.headers.get("content-disposition") ?? "",
        bytes: Buffer.from(await response.arrayBuffer())
      }
    }

    it("presign -> PUT to the store -> send -> download by key and by id, under the file name -> delete -> 404", async () => {
      const content = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 13) % 256))
      const presigned = await api("POST", "/attachments/presign", {
        filename: "Relevé.pdf",
        content_type: "application/pdf"
      })
      assert.strictEqual(presigned.status, 201, JSON.stringify(presigned.body))
      const { url, key, attachment_id } = presigned.body as { url: string; key: string; attachment_id: string }
      const refused = await peer.fetch(url, { method: "PUT", headers: { "content-type": "text/html" }, body: "<b>" })
      assert.isFalse(refused.ok, "the store accepted another content type")
      const put = await peer.fetch(url, {
        method: "PUT",
        headers: { "content-type": "application/pdf" },
        body: content
      })
      assert.isTrue(put.ok, `upload answered ${put.status}: ${await put.text()}`)

      const sent = await api("POST", "/emails", {
        from: "billing@acme.example",
        to: ["alice@example.com"],
        subject: "Your statement",
        body: { text: "Attached." },
        attachments: [{ filename: "statement.pdf", key }]
      })
      assert.strictEqual(sent.status, 201, JSON.stringify(sent.body))
      const parsed = await simpleParser(await readFile(join(dir, "outbox", `${sent.body.message_id}.eml`)))
      assert.isTrue(parsed.attachments[0]?.content.equals(content), "the sent attachment's bytes differ")

      for (const answer of [
        await api("GET", `/attachments/download?key=${encodeURIComponent(key)}`),
        await api("GET", `/v1/attachments/download?attachment_id=${attachment_id}`)
      ]) {
        const { disposition, bytes } = await downloaded(answer)
        assert.isTrue(bytes.equals(content), "the downloaded bytes differ")
        assert.match(disposition, /^attachment;/)
        assert.include(disposition, "filename*=UTF-8''Relev%C3%A9.pdf")
      }

      assert.deepStrictEqual((await api("DELETE", `/attachments/delete?key=${encodeURIComponent(key)}`)).body, {
        deleted: true,
        key
      })
      assert.strictEqual((await api("GET", `/attachments/download?key=${encodeURIComponent(key)}`)).status, 404)
      assert.strictEqual((await api("GET", `/v1/attachments/download?attachment_id=${attachment_id}`)).status, 404)
      assert.strictEqual((await api("DELETE", `/attachments/delete?key=${encodeURIComponent(key)}`)).status, 404)
    })
  })
}

describe("a storage option the adapter refuses", () => {
  it("stops start-up with the config's error, naming the option under storage", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mailroom-storage-option-"))
    try {
      for (const [storage, problem] of [
        [
          { kind: "s3", bucket: "mailroom-attachments", region: "eu-west-3", accessKeyId: "AKIDEXAMPLE" },
          "storage.secretAccessKey: must be given with accessKeyId"
        ],
        [
          { kind: "gcs", bucket: "mailroom-attachments", keyFilename: join(dir, "missing.json") },
          "storage.keyFilename: cannot be read (ENOENT)"
        ]
      ] as const) {
        const config = ServerConfig.parse(
          {
            port: 0,
            serviceDomain: "mailroom.test",
            organizations: [],
            storage,
            provider: { kind: "outbox", dir: "outbox" }
          },
          { baseDir: dir }
        )
        const error = await Server.start(config, { log: () => {} }).then(
          (running) => running.close().then(() => undefined),
          (cause: unknown) => cause
        )
        assert.instanceOf(error, ServerConfig.ServerConfigError, storage.kind)
        assert.include((error as Error).message, problem)
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
