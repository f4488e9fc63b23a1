// The service behind the handler in these tests: memory layers, a provider whose next answer a test
// can script, a store that can be made to fail and that contributes routes the way the disk store does.
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { createAdaptorServer } from "@hono/node-server"
import {
  EmailProvider,
  IdempotencyStore,
  Mailroom,
  MailroomError,
  MessageLog,
  ObjectStore,
  Organizations,
  type ProviderError,
  Suppressions
} from "@mailroom/core"
import { Effect, Layer } from "effect"
import { assert } from "vitest"
import { MailroomHandler, StoreRoutes } from "../src/index.js"

/** An answer as a test reads it: status, headers, the body parsed. */
export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
}

/** The smallest valid send of acme's. */
export const message = {
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject: "Your invoice",
  body: { text: "See attached." }
}

/** A JSON call to the server at `url()`: with acme's API key unless `key` names another (null: none). */
export const jsonCaller =
  (url: () => string) =>
  async (
    method: string,
    path: string,
    init: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {}
  ): Promise<Answer> => {
    const key = init.key === undefined ? keys.acme : init.key
    const response = await fetch(`${url()}${path}`, {
      method,
      headers: {
        ...(key === null ? {} : { "x-api-key": key }),
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
        ...init.headers
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
    })
    return { status: response.status, headers: response.headers, body: await response.json() }
  }

/** The answer is JSON, with this status and this body. */
export const expectJson = (answer: Answer, status: number, body: unknown) => {
  assert.strictEqual(answer.status, status, JSON.stringify(answer.body))
  assert.match(answer.headers.get("content-type") ?? "", /^application\/json/)
  assert.deepStrictEqual(answer.body, body)
}

export const keys = { acme: "mr_test_acme", globex: "mr_test_globex", acmeToken: "tok_acme", globexToken: "tok_globex" }

export const makeWorld = () => {
  const memory = ObjectStore.makeMemory()
  const provider = EmailProvider.makeMemory({
    limits: { ...EmailProvider.memoryLimits, forbiddenExtensions: ["exe"] }
  })
  const control = {
    /** The provider's next answers, consumed in order, before it falls back to accepting. */
    failures: [] as Array<ProviderError.ProviderError>,
    storeBroken: false,
    /** Organisations whose store cannot be reached, as a database-backed source answers during an outage. */
    organizationsDown: false,
    endlessCancelled: false,
    /** The message log and suppression list: reachable, unreachable (`Unavailable`) or failing unexpectedly. */
    messages: "up" as "up" | "down" | "broken",
    /** The Idempotency-Key store: working, or failing unexpectedly. */
    idempotency: "up" as "up" | "broken",
    logged: [] as Array<string>,
    /** Every key the service asked the store about (head, read, get, presign, delete), in order. */
    asked: [] as Array<string>,
    /** The `StoreRoutes.MountPath` each presign ran under, in order: where the disk store would sign it. */
    mounts: [] as Array<string>
  }
  const broken = Effect.fail(
    new ObjectStore.ObjectStoreError({
      store: "s3",
      reason: new ObjectStore.Unavailable({ message: "bucket s3://secret-internal-bucket unreachable" })
    })
  )
  const ask = (key: string) => Effect.sync(() => void control.asked.push(key))
  const seeMount = Effect.flatMap(Effect.service(StoreRoutes.MountPath), (mount) =>
    Effect.sync(() => void control.mounts.push(mount))
  )
  const store: ObjectStore.ObjectStore = {
    ...memory,
    head: (key) => Effect.andThen(ask(key), control.storeBroken ? broken : memory.head(key)),
    get: (key) => Effect.andThen(ask(key), memory.get(key)),
    read: (key, options) => Effect.andThen(ask(key), control.storeBroken ? broken : memory.read(key, options)),
    presignPut: (options) =>
      Effect.andThen(ask(options.key), seeMount).pipe(
        Effect.andThen(control.storeBroken ? broken : memory.presignPut(options))
      ),
    presignGet: (options) =>
      Effect.andThen(ask(options.key), seeMount).pipe(Effect.andThen(memory.presignGet(options))),
    delete: (key) => Effect.andThen(ask(key), control.storeBroken ? broken : memory.delete(key))
  }
  // Like the disk store: the URLs it hands out could be served by this handler under a prefix.
  const routes: StoreRoutes.StoreRoutes = {
    pathPrefix: "/_store/",
    methods: ["GET", "PUT"],
    handle: async (request) => {
      if (request.url.endsWith("/_store/endless")) {
        // A download that never ends, to see it released when the client goes away.
        return new Response(
          new ReadableStream<Uint8Array>({
            pull: (controller) => controller.enqueue(new Uint8Array(64 * 1024)),
            cancel: () => {
              control.endlessCancelled = true
            }
          }),
          { headers: { "content-type": "application/octet-stream" } }
        )
      }
      const url = new URL(request.url)
      const target = `http://memory.mailroom.invalid/${url.pathname.slice(url.pathname.indexOf("/_store/") + 8)}${url.search}`
      const init: RequestInit = { method: request.method, headers: request.headers }
      if (request.method === "PUT") init.body = await request.arrayBuffer()
      return memory.fetch(target, init)
    }
  }
  const scripted: EmailProvider.EmailProvider = {
    ...provider,
    send: (email) => {
      const failure = control.failures.shift()
      return failure === undefined ? provider.send(email) : Effect.fail(failure)
    }
  }
  const unreachable = Effect.fail(
    new MailroomError.Unavailable({ message: "credentials cannot be checked right now; nothing was done" })
  )
  const configured = Organizations.makeStatic({
    serviceDomain: "mailroom.test",
    organizations: [
      {
        id: "org_acme",
        slug: "acme",
        verifiedDomains: ["acme.example"],
        apiKeys: [keys.acme],
        accessTokens: [keys.acmeToken]
      },
      {
        id: "org_globex",
        slug: "globex",
        verifiedDomains: ["globex.example"],
        apiKeys: [keys.globex],
        accessTokens: [keys.globexToken]
      }
    ]
  })
  const organizations: Organizations.Organizations = {
    authenticate: (credential) => (control.organizationsDown ? unreachable : configured.authenticate(credential)),
    find: (orgId) => (control.organizationsDown ? unreachable : configured.find(orgId)),
    verifiedDomains: (principal) => (control.organizationsDown ? unreachable : configured.verifiedDomains(principal))
  }
  /** Every method of `service`, failing as `control.messages` says. */
  const breakable = <S extends object>(service: S): S =>
    Object.fromEntries(
      Object.entries(service).map(([name, method]) => [
        name,
        (...args: Array<unknown>) =>
          control.messages === "down"
            ? Effect.fail(new MailroomError.Unavailable({ message: "the message log cannot be reached" }))
            : control.messages === "broken"
              ? Effect.die(new Error("the message log broke"))
              : (method as (...args: Array<unknown>) => unknown)(...args)
      ])
    ) as S
  const layer = Mailroom.layer({
    provider: Layer.succeed(EmailProvider.EmailProvider, scripted),
    store: Layer.mergeAll(
      Layer.succeed(ObjectStore.ObjectStore, store),
      Layer.succeed(StoreRoutes.StoreRoutes, routes)
    ),
    organizations: Layer.succeed(Organizations.Organizations, organizations),
    messages: Layer.mergeAll(
      Layer.succeed(MessageLog.MessageLog, breakable(MessageLog.makeMemory())),
      Layer.succeed(Suppressions.Suppressions, breakable(Suppressions.makeMemory()))
    ),
    idempotency: Layer.sync(IdempotencyStore.IdempotencyStore, () => {
      const memory = IdempotencyStore.makeMemory()
      return {
        ...memory,
        reserve: (scope, fingerprint) =>
          control.idempotency === "broken"
            ? Effect.die(new Error("the store broke"))
            : memory.reserve(scope, fingerprint)
      }
    }),
    mailer: { retry: { maxAttempts: 1 } }
  })
  return { memory, provider, control, layer }
}

export type World = ReturnType<typeof makeWorld>

export interface Running {
  readonly url: string
  readonly server: Server
  readonly close: () => Promise<void>
}

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
  )

const closer = (server: Server, dispose: () => Promise<void>) => () =>
  new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }).then(dispose)

/** The two ways of mounting the handler, each behind a real HTTP server on 127.0.0.1. */
export const transports = {
  "Node handler": async (world: World, options: MailroomHandler.Options = {}): Promise<Running> => {
    const handler = MailroomHandler.fromLayer(world.layer, {
      ...options,
      logError: (m) => world.control.logged.push(m)
    })
    const server = createServer(handler.node)
    return { url: await listen(server), server, close: closer(server, handler.dispose) }
  },
  "Web handler": async (world: World, options: MailroomHandler.Options = {}): Promise<Running> => {
    const handler = MailroomHandler.fromLayer(world.layer, {
      ...options,
      logError: (m) => world.control.logged.push(m)
    })
    const server = createAdaptorServer({ fetch: handler.web }) as Server
    return { url: await listen(server), server, close: closer(server, handler.dispose) }
  }
} as const
