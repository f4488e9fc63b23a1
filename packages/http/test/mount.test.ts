// mailroom mounted under a path, in each way a framework mounts it: Express's app.use(path) and its
// routers (which take the path off and say so in req.baseUrl), the Fastify plugin's prefix, and
// `basePath` for a handler that gets the whole URL. What a client sees: routes, records, the
// document's paths, and the mount the store signs its URLs under.
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { createAdaptorServer } from "@hono/node-server"
import express from "express"
import Fastify from "fastify"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { MailroomFastify } from "../src/fastify.js"
import { MailroomHandler } from "../src/index.js"
import { keys, makeWorld, type World } from "./world.js"

const message = { from: "billing@acme.example", to: ["alice@example.com"], subject: "Hi", body: { text: "hi" } }
const headers = { "x-api-key": keys.acme, "content-type": "application/json" }

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
const closing = (server: Server) => () =>
  new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })

interface Mounted {
  /** Where clients reach mailroom: the app's address and the mount. */
  readonly base: string
  readonly close: () => Promise<void>
}

/** Each way of mounting mailroom at `path` ("" for the root), on a real server. */
const mounts: Record<string, (world: World, path: string) => Promise<Mounted>> = {
  "Express, app.use(path, mailroom.node)": async (world, path) => {
    const mailroom = MailroomHandler.fromLayer(world.layer)
    const app = express()
    app.use(path === "" ? "/" : path, mailroom.node)
    app.get("/health", (_req, res) => {
      res.json({ ok: true })
    })
    const server = app.listen(0, "127.0.0.1")
    await new Promise<void>((resolve) => server.once("listening", resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return { base: `${url}${path}`, close: () => closing(server)().then(mailroom.dispose) }
  },
  "Express, a router mounted at /api holding mailroom at the rest of the path": async (world, path) => {
    const mailroom = MailroomHandler.fromLayer(world.layer)
    const app = express()
    const router = express.Router()
    router.use(path.replace(/^\/api/, "") || "/", mailroom.node)
    app.use("/api", router)
    const server = app.listen(0, "127.0.0.1")
    await new Promise<void>((resolve) => server.once("listening", resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return { base: `${url}${path}`, close: () => closing(server)().then(mailroom.dispose) }
  },
  "Fastify, the plugin registered with a prefix": async (world, path) => {
    const app = Fastify()
    await app.register(MailroomFastify.plugin, { prefix: path, layer: world.layer })
    const url = await app.listen({ port: 0, host: "127.0.0.1" })
    return { base: `${url}${path}`, close: () => app.close() }
  },
  "a Web handler given basePath": async (world, path) => {
    const mailroom = MailroomHandler.fromLayer(world.layer, { basePath: path })
    const server = createAdaptorServer({ fetch: mailroom.web }) as Server
    const url = await listen(server)
    return { base: `${url}${path}`, close: () => closing(server)().then(mailroom.dispose) }
  },
  "a Node handler given basePath": async (world, path) => {
    const mailroom = MailroomHandler.fromLayer(world.layer, { basePath: path })
    const { createServer } = await import("node:http")
    const server = createServer(mailroom.node)
    const url = await listen(server)
    return { base: `${url}${path}`, close: () => closing(server)().then(mailroom.dispose) }
  }
}

for (const [name, mount] of Object.entries(mounts)) {
  for (const path of name.includes("router") ? ["/api/mail", "/api"] : ["/mail", "/api/mail", ""]) {
    describe(`${name} at "${path}"`, () => {
      let world: World
      let mounted: Mounted
      beforeAll(async () => {
        world = makeWorld()
        mounted = await mount(world, path)
      })
      afterAll(() => mounted.close())

      it("signs the store's URLs under the mount: presign and download, in both variants", async () => {
        const presign = await fetch(`${mounted.base}/attachments/presign`, {
          method: "POST",
          headers,
          body: JSON.stringify({ filename: "a.txt", content_type: "text/plain" })
        })
        assert.strictEqual(presign.status, 201)
        const { key } = (await presign.json()) as { key: string }
        const download = await fetch(`${mounted.base}/attachments/download?key=${encodeURIComponent(key)}`, {
          headers
        })
        assert.strictEqual(download.status, 404, "nothing was uploaded, but the store was asked to sign")
        const v1 = await fetch(`${mounted.base}/v1/attachments/presign`, {
          method: "POST",
          headers: { authorization: `Bearer ${keys.acmeToken}`, "content-type": "application/json" },
          body: JSON.stringify({ filename: "b.txt", content_type: "text/plain" })
        })
        assert.strictEqual(v1.status, 201, "the v1 variant follows the mount")
        assert.deepStrictEqual(world.control.mounts, [path, path])
      })

      it("serves the records routes under the mount: a send read back by id, a suppression removed", async () => {
        const sent = await fetch(`${mounted.base}/emails`, { method: "POST", headers, body: JSON.stringify(message) })
        assert.strictEqual(sent.status, 201)
        const { message_id } = (await sent.json()) as { message_id: string }
        const record = await fetch(`${mounted.base}/emails/${message_id}`, { headers })
        assert.strictEqual(record.status, 200)
        assert.strictEqual(((await record.json()) as { id: string }).id, message_id)
        const list = await fetch(`${mounted.base}/emails?limit=1`, { headers })
        assert.deepStrictEqual(
          ((await list.json()) as { data: Array<{ id: string }> }).data.map((r) => r.id),
          [message_id]
        )
        const email = "bob+tag@example.com"
        const listed = await fetch(`${mounted.base}/suppressions`, {
          method: "POST",
          headers,
          body: JSON.stringify({ email })
        })
        assert.strictEqual(listed.status, 201)
        const removed = await fetch(`${mounted.base}/suppressions/${encodeURIComponent(email)}`, {
          method: "DELETE",
          headers
        })
        assert.deepStrictEqual(await removed.json(), { deleted: true, email })
      })

      it("GET /openapi.json under the mount lists the paths as clients call them", async () => {
        const document = await fetch(`${mounted.base}/openapi.json`)
        assert.strictEqual(document.status, 200)
        const paths = Object.keys(((await document.json()) as { paths: Record<string, unknown> }).paths)
        assert.includeMembers(paths, [
          `${path}/emails`,
          `${path}/emails/{id}`,
          `${path}/attachments/presign`,
          `${path}/v1/attachments/presign`,
          `${path}/suppressions/{email}`
        ])
        assert.isTrue(
          paths.every((p) => p.startsWith(`${path}/`)),
          paths.join(", ")
        )
      })
    })
  }
}

describe("Express, mailroom mounted at two paths of one app", () => {
  it("each request's links follow the path it came in by, and each document names its own", async () => {
    const world = makeWorld()
    const mailroom = MailroomHandler.fromLayer(world.layer, { unknownRoutes: "404" })
    const app = express()
    app.use("/mail", mailroom.node)
    app.use("/legacy/mail", mailroom.node)
    const server = app.listen(0, "127.0.0.1")
    await new Promise<void>((resolve) => server.once("listening", resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      for (const path of ["/mail", "/legacy/mail", "/mail"]) {
        const presign = await fetch(`${url}${path}/attachments/presign`, {
          method: "POST",
          headers,
          body: JSON.stringify({ filename: "a.txt" })
        })
        assert.strictEqual(presign.status, 201)
        const document = (await (await fetch(`${url}${path}/openapi.json`)).json()) as { paths: object }
        assert.include(Object.keys(document.paths), `${path}/emails`)
      }
      assert.deepStrictEqual(world.control.mounts, ["/mail", "/legacy/mail", "/mail"])
      const unknown = await fetch(`${url}/legacy/mail/nope`)
      assert.deepStrictEqual(await unknown.json(), { message: "no route for GET /legacy/mail/nope" })
    } finally {
      await closing(server)()
      await mailroom.dispose()
    }
  })
})

describe("publicUrl of the handler: servers in /openapi.json", () => {
  const documentUnder = async (publicUrl: string) => {
    const world = makeWorld()
    const mailroom = MailroomHandler.fromLayer(world.layer, { publicUrl })
    const app = express()
    app.use("/mail", mailroom.node)
    const server = app.listen(0, "127.0.0.1")
    await new Promise<void>((resolve) => server.once("listening", resolve))
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      return (await (await fetch(`${url}/mail/openapi.json`)).json()) as {
        servers: Array<{ url: string }>
        paths: Record<string, unknown>
      }
    } finally {
      await closing(server)()
      await mailroom.dispose()
    }
  }

  it("an origin alone: the paths carry the mount", async () => {
    const document = await documentUnder("https://example.com")
    assert.deepStrictEqual(document.servers, [{ url: "https://example.com" }])
    assert.includeMembers(Object.keys(document.paths), ["/mail/emails", "/mail/v1/attachments/presign"])
  })

  it("with the path clients use behind a proxy: the paths are below it, whatever the mount", async () => {
    const document = await documentUnder("https://example.com/api/mail/")
    assert.deepStrictEqual(document.servers, [{ url: "https://example.com/api/mail" }])
    assert.includeMembers(Object.keys(document.paths), ["/emails", "/emails/{id}", "/v1/attachments/presign"])
    assert.notInclude(Object.keys(document.paths), "/mail/emails")
  })
})

describe("the Fastify plugin", () => {
  it("serves handlers made elsewhere, which their maker releases", async () => {
    const world = makeWorld()
    const handlers = MailroomHandler.fromLayer(world.layer)
    const app = Fastify()
    await app.register(MailroomFastify.plugin, { prefix: "/mail", handlers })
    const url = await app.listen({ port: 0, host: "127.0.0.1" })
    try {
      const sent = await fetch(`${url}/mail/emails`, { method: "POST", headers, body: JSON.stringify(message) })
      assert.strictEqual(sent.status, 201)
      await app.close()
      // Still serving: the app's close did not release what it did not build.
      const direct = await handlers.web(
        new Request("http://localhost/emails", { method: "POST", headers, body: JSON.stringify(message) })
      )
      assert.strictEqual(direct.status, 201)
    } finally {
      await app.close()
      await handlers.dispose()
    }
  })

  it("refuses handlers it cannot mount, saying what to pass", async () => {
    const app = Fastify()
    const handlers = { node: async () => {}, web: async () => new Response() }
    app.register(MailroomFastify.plugin, { prefix: "/mail", handlers })
    const started = await app.ready().then(
      () => "started",
      (error: Error) => error.message
    )
    assert.strictEqual(started, "handlers: must be made by MailroomHandler.make or MailroomHandler.fromLayer")
    await app.close().catch(() => undefined)
  })
})
