// A server for the HTTP benchmarks, in its own process: `router` mounts @mailroom/http's Node handler;
// `bare` is plain node:http making the same core calls with no router; `parse` only JSON.parses
// each body; `local` is `router` on the local disk store (DiskObjectStore in a temporary folder) instead
// of the memory store. Prints its port.
import { mkdtempSync } from "node:fs"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Attachments, EmailProvider, Mailer, Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { MailroomHandler } from "@mailroom/http"
import { DiskObjectStore } from "@mailroom/local"
import { Effect, Layer, ManagedRuntime } from "effect"

// A provider that answers at once, so the benchmark measures mailroom and not a vendor.
const provider: EmailProvider.EmailProvider = {
  ...EmailProvider.makeMemory(),
  send: () => Effect.succeed({ messageId: "bench" })
}
const kind = process.argv[2]
const store =
  kind === "local"
    ? DiskObjectStore.layer({
        dir: mkdtempSync(join(tmpdir(), "mailroom-bench-store-")),
        publicUrl: "http://127.0.0.1:3000",
        signingSecret: "bench-secret"
      })
    : ObjectStore.layerMemory()
const layer = Mailroom.layer({
  provider: Layer.succeed(EmailProvider.EmailProvider, provider),
  store,
  organizations: Organizations.layerStatic({
    serviceDomain: "mailroom.test",
    organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_bench"] }]
  })
})

const readJson = (req: IncomingMessage) =>
  new Promise<unknown>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      } catch (error) {
        reject(error)
      }
    })
    req.on("error", reject)
  })

const bare = () => {
  const runtime = ManagedRuntime.make(layer)
  return createServer(async (req, res) => {
    const body = await readJson(req)
    const exit = await runtime.runPromiseExit(
      Effect.gen(function* () {
        const organizations = yield* Organizations.Organizations
        const principal = yield* organizations.authenticate({ kind: "apiKey", value: String(req.headers["x-api-key"]) })
        if (req.url === "/emails") return (yield* (yield* Mailer.Mailer).send(principal, body as never)).response
        return yield* (yield* Attachments.Attachments).presign(principal, body as never)
      })
    )
    const text = JSON.stringify(exit._tag === "Success" ? exit.value : { error: "failed" })
    res.writeHead(exit._tag === "Success" ? 201 : 500, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(text)
    })
    res.end(text)
  })
}

/** Only reads the body and JSON.parses it: the floor of what any JSON API pays for a request. */
const parseOnly = () =>
  createServer(async (req, res) => {
    let status = 400
    try {
      await readJson(req)
    } catch {
      status = 400
    }
    res.writeHead(status, { "content-type": "application/json" })
    res.end(JSON.stringify({ errors: ["request: refused"] }))
  })

const server =
  kind === "bare" ? bare() : kind === "parse" ? parseOnly() : createServer(MailroomHandler.fromLayer(layer).node)
server.listen(0, "127.0.0.1", () => console.log((server.address() as AddressInfo).port))
