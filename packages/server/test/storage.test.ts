// The server configured for the cloud stores, each against its test peer: "s3" against s3rver, which
// checks SigV4 signatures, and "gcs" against the firebase-tools storage emulator, with signed URLs
// checked by the independent V4 verifier. The same flow runs on both.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Redacted, Scope } from "effect"
import { simpleParser } from "mailparser"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { startStorageEmulator } from "../../gcs/test/support/emulator.js"
import { makeServiceAccount } from "../../gcs/test/support/keys.js"
import { makeSignedUrlFetch } from "../../gcs/test/support/signedUrlFetch.js"
import * as S3rver from "../../s3/test/s3rver.js"
import { Server, ServerConfig } from "../src/index.js"

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

interface Setup {
  readonly storage: Record<string, unknown>
  /** How a client reaches the store's signed URLs (GCS's endpoint is stood in for by a verifying fetch). */
  readonly fetch: Fetch
  /**
   * How the download URL is checked. s3rver refuses every URL whose response-content-disposition
   * carries `filename*=UTF-8''...`, even the AWS SDK's own, because it leaves the apostrophes
   * unencoded when it rebuilds the canonical query; @mailroom/s3's tests verify those signatures
   * with an independent SigV4 verifier instead. Here the S3 URL is checked for its key and signature.
   */
  readonly checkDownload?: (url: string, key: string) => void
  readonly close: () => Promise<void>
}

const setups: Record<string, (dir: string) => Promise<Setup>> = {
  s3: async () => {
    const scope = Effect.runSync(Scope.make())
    const peer = await Effect.runPromise(Scope.provide(scope)(S3rver.start()))
    return {
      storage: {
        kind: "s3",
        bucket: S3rver.bucket,
        region: S3rver.region,
        endpoint: peer.endpoint,
        forcePathStyle: true,
        ...S3rver.credentials
      },
      fetch: (input, init) => fetch(input, init),
      checkDownload: (url, key) => {
        const parsed = new URL(url)
        assert.strictEqual(decodeURIComponent(parsed.pathname), `/${S3rver.bucket}/${key}`)
        assert.isTrue(parsed.searchParams.has("X-Amz-Signature"))
        assert.include(
          parsed.searchParams.get("response-content-disposition") ?? "",
          "filename*=UTF-8''Relev%C3%A9.pdf"
        )
      },
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
    let server: Server.RunningServer
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), `mailroom-${kind}-`))
      peer = await setup(dir)
      server = await Server.start(
        ServerConfig.parse(
          {
            port: 0,
            serviceDomain: "mailroom.test",
            organizations: [
              { id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }
            ],
            storage: peer.storage,
            provider: { kind: "outbox", dir: "outbox" }
          },
          { baseDir: dir }
        ),
        { log: () => {}, logError: () => {} }
      )
    })
    afterAll(async () => {
      await server?.close()
      await peer?.close()
      await rm(dir, { recursive: true, force: true })
    })

    const api = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { "x-api-key": "mr_test_acme", ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      return { status: response.status, body: (await response.json()) as Record<string, unknown> }
    }

    it("presign -> PUT to the store -> send -> download -> delete -> 404", async () => {
      const content = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 13) % 256))
      const presigned = await api("POST", "/attachments/presign", {
        filename: "Relevé.pdf",
        content_type: "application/pdf"
      })
      assert.strictEqual(presigned.status, 201, JSON.stringify(presigned.body))
      const { url, key } = presigned.body as { url: string; key: string }
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

      const download = await api("GET", `/attachments/download?key=${encodeURIComponent(key)}`)
      assert.strictEqual(download.status, 200)
      if (peer.checkDownload !== undefined) peer.checkDownload(String(download.body.download_url), key)
      else {
        const fetched = await peer.fetch(String(download.body.download_url))
        assert.isTrue(Buffer.from(await fetched.arrayBuffer()).equals(content), "the downloaded bytes differ")
      }

      assert.deepStrictEqual((await api("DELETE", `/attachments/delete?key=${encodeURIComponent(key)}`)).body, {
        deleted: true,
        key
      })
      assert.strictEqual((await api("GET", `/attachments/download?key=${encodeURIComponent(key)}`)).status, 404)
      assert.strictEqual((await api("DELETE", `/attachments/delete?key=${encodeURIComponent(key)}`)).status, 404)
    })
  })
}
