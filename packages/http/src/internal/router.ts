// The route table of DESIGN section 3 over a transport-neutral request, so the Node and the Web
// handlers answer byte for byte alike.

import { isUtf8 } from "node:buffer"
import { Attachments, type EventSource, MailEvents, Mailer, MailroomError, Organizations, Wire } from "@mailroom/core"
import { withSpan } from "@mailroom/core/adapter"
import { Cause, Effect, Exit, Option } from "effect"
import * as OpenApi from "../OpenApi.js"
import * as StoreRoutes from "../StoreRoutes.js"
import { maxDepth, nestsDeeperThan } from "./json.js"
import { describe, failure, internal, type Outgoing, ok, type Variant } from "./responses.js"

/** What a transport hands the router. */
export interface Incoming {
  readonly method: string
  readonly pathname: string
  readonly query: URLSearchParams
  readonly header: (name: string) => string | undefined
  /** The body, or "too-large" as soon as more than `limit` bytes arrive. */
  readonly body: (limit: number) => Promise<Uint8Array | "too-large">
  /**
   * The same request as a Web Request, for routes a store contributes (streamed bodies), or the
   * error that says why its exact bytes are gone (read and parsed by middleware first).
   */
  readonly toWeb: () => Request | Error
}

/** `unrouted`: no route of mailroom's serves the request, so a framework may hand it on. */
export type Answer =
  | (Outgoing & { readonly unrouted?: true })
  | { readonly web: Response; readonly idleTimeoutMillis?: number | undefined }

export interface Options {
  /**
   * The origin clients reach this API at, e.g. "https://mail.example.com": `servers` in
   * `GET /openapi.json`, so generated clients know where to call. Default: none listed.
   */
  readonly publicUrl?: string
  /** Prefix of the base variant's paths, e.g. "/mail". Default "". */
  readonly basePath?: string
  /** Prefix before `/v1` of the versioned variant's paths. Default "". */
  readonly v1BasePath?: string
  /** Largest JSON body accepted, in bytes. Default 1 MiB. */
  readonly maxBodyBytes?: number
  /** Where the causes of 500s go. Default: console.error. Never given a credential. */
  readonly logError?: (message: string) => void
  /**
   * Providers' delivery webhooks, each served at `POST {basePath}/webhooks/{name}` (`SesEventSource`,
   * `PostmarkEventSource`); their events go to core's `MailEvents`. Default: none.
   */
  readonly eventSources?: ReadonlyArray<EventSource.EventSource>
}

export type Services = Mailer.Mailer | Attachments.Attachments | Organizations.Organizations | MailEvents.MailEvents

type Credential = "apiKey" | "bearer"

interface Route {
  readonly method: string
  readonly variant: Variant
  readonly auth?: Credential
  /** The body, parsed as JSON (`json`) or as bytes (`raw`, for webhooks whose signature covers them). */
  readonly body?: "json" | "raw"
  readonly run: (context: Context) => Effect.Effect<Outgoing, unknown, Services>
}

interface Context {
  readonly request: Incoming
  readonly principal: Organizations.Principal
  readonly body: unknown
}

/** The principal of a route that takes no credential (none reads it). */
const anonymous: Organizations.Principal = { orgId: "", slug: "" }

const trimSlash = (path: string | undefined) => (path ?? "").replace(/\/+$/, "")

const singleQuery = (query: URLSearchParams, names: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const out: Record<string, string> = {}
    const problems: Array<string> = []
    for (const [name] of query) {
      if (!names.includes(name)) problems.push(`${name}: is not a known query parameter`)
    }
    for (const name of names) {
      const values = query.getAll(name)
      if (values.length > 1) problems.push(`${name}: must be given once`)
      else if (values[0] !== undefined) out[name] = values[0]
    }
    if (problems.length > 0) return yield* new MailroomError.ValidationError({ errors: problems })
    return out
  })

const routes = (
  basePath: string,
  v1BasePath: string,
  eventSources: ReadonlyArray<EventSource.EventSource>,
  publicUrl: string | undefined
): ReadonlyMap<string, ReadonlyArray<Route>> => {
  const attachments = Attachments.Attachments
  const decodeByKey = Wire.decode(Wire.DownloadByKeyQuery)
  const decodeById = Wire.decode(Wire.DownloadByIdQuery)
  const decodeDelete = Wire.decode(Wire.DeleteByIdRequest)
  const table = new Map<string, Array<Route>>()
  const add = (path: string, route: Route) => table.set(path, [...(table.get(path) ?? []), route])

  add(`${basePath}/emails`, {
    method: "POST",
    variant: "emails",
    auth: "apiKey",
    body: "json",
    // The hot path of the API: plain steps, no generator.
    run: ({ request, principal, body }) =>
      Effect.flatMap(Mailer.Mailer, (mailer) => {
        const idempotencyKey = request.header("idempotency-key")
        return Effect.map(
          mailer.send(principal, body as never, idempotencyKey === undefined ? {} : { idempotencyKey }),
          ({ response, replayed }) => ok(201, response, replayed ? { "idempotent-replayed": "true" } : {})
        )
      })
  })
  const presign = (variant: Variant, auth: Credential): Route => ({
    method: "POST",
    variant,
    auth,
    body: "json",
    run: ({ principal, body }) =>
      Effect.flatMap(attachments, (a) => a.presign(principal, body as never)).pipe(Effect.map((r) => ok(201, r)))
  })
  add(`${basePath}/attachments/presign`, presign("attachments", "apiKey"))
  add(`${basePath}/attachments/download`, {
    method: "GET",
    variant: "attachments",
    auth: "apiKey",
    run: ({ request, principal }) =>
      Effect.gen(function* () {
        const { key } = yield* Effect.flatMap(singleQuery(request.query, ["key"]), decodeByKey)
        return ok(200, yield* (yield* attachments).download(principal, key))
      })
  })
  add(`${basePath}/attachments/delete`, {
    method: "DELETE",
    variant: "attachments",
    auth: "apiKey",
    run: ({ request, principal }) =>
      Effect.gen(function* () {
        const { key } = yield* Effect.flatMap(singleQuery(request.query, ["key"]), decodeByKey)
        return ok(200, yield* (yield* attachments).delete(principal, key))
      })
  })
  add(`${v1BasePath}/v1/attachments/presign`, presign("v1", "bearer"))
  add(`${v1BasePath}/v1/attachments/download`, {
    method: "GET",
    variant: "v1",
    auth: "bearer",
    run: ({ request, principal }) =>
      Effect.gen(function* () {
        const { attachment_id } = yield* Effect.flatMap(singleQuery(request.query, ["attachment_id"]), decodeById)
        return ok(200, yield* (yield* attachments).downloadById(principal, attachment_id))
      })
  })
  add(`${v1BasePath}/v1/attachments`, {
    method: "DELETE",
    variant: "v1",
    auth: "bearer",
    body: "json",
    run: ({ principal, body }) =>
      Effect.gen(function* () {
        const { attachment_id } = yield* decodeDelete(body)
        return ok(200, yield* (yield* attachments).deleteById(principal, attachment_id))
      })
  })
  for (const source of eventSources) {
    if (!/^[a-z0-9-]+$/.test(source.name)) throw new Error(`eventSources: "${source.name}" is not a path segment`)
    const path = `${basePath}/webhooks/${source.name}`
    if (table.has(path)) throw new Error(`eventSources: two sources are named "${source.name}"`)
    add(path, {
      method: "POST",
      variant: "other",
      body: "raw",
      run: ({ request, body }) =>
        Effect.gen(function* () {
          // The source verifies the caller; nothing is published from a request it refuses.
          const received = yield* source.receive({ header: request.header, body: body as Uint8Array })
          const published = yield* (yield* MailEvents.MailEvents).publish(received)
          return ok(200, { events: published.length })
        })
    })
  }
  let document: Outgoing | undefined
  add(`${basePath}/openapi.json`, {
    method: "GET",
    variant: "other",
    run: () =>
      Effect.gen(function* () {
        document ??= ok(
          200,
          OpenApi.document({
            basePath,
            v1BasePath,
            webhooks: eventSources.map((s) => s.name),
            maxUploadBytes: (yield* attachments).maxUploadBytes,
            ...(publicUrl === undefined ? {} : { publicUrl })
          })
        )
        return document
      })
  })
  return table
}

const bearer = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

/** Runs an effect that needs the services; a ManagedRuntime's runPromiseExit, or one made from a Context. */
export type Runner = <A, E>(effect: Effect.Effect<A, E, Services>) => Promise<Exit.Exit<A, unknown>>

/** Builds the request handler over whatever runs effects with the services. */
export const make = (runPromiseExit: Runner, options: Options = {}) => {
  const basePath = trimSlash(options.basePath)
  const v1BasePath = trimSlash(options.v1BasePath)
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024
  const logError = options.logError ?? ((message: string) => console.error(message))
  const table = routes(basePath, v1BasePath, options.eventSources ?? [], options.publicUrl)
  // Stores whose URLs point back here (the local disk store) contribute routes; looked up once.
  let storeRoutes: Promise<StoreRoutes.StoreRoutes | undefined> | undefined

  const credential = (request: Incoming, kind: Credential): Organizations.Credential | undefined => {
    if (kind === "apiKey") {
      const value = request.header("x-api-key")
      return value === undefined || value === "" ? undefined : { kind: "apiKey", value }
    }
    const match = bearer.exec(request.header("authorization") ?? "")
    return match?.[1] === undefined ? undefined : { kind: "accessToken", value: match[1] }
  }

  /** The body's bytes, or the answer that refuses it. */
  const readBytes = async (request: Incoming, variant: Variant): Promise<Outgoing | { readonly bytes: Uint8Array }> => {
    const declared = Number(request.header("content-length"))
    if (declared > maxBodyBytes) return failure(variant, 413, [`the body is larger than ${maxBodyBytes} bytes`])
    let bytes: Uint8Array | "too-large"
    try {
      bytes = await request.body(maxBodyBytes)
    } catch {
      // The client went away mid-body: nothing to log, and whatever is answered goes nowhere.
      return failure(
        variant,
        400,
        variant === "emails" ? ["request: the body could not be read"] : ["the body could not be read"]
      )
    }
    if (bytes === "too-large") return failure(variant, 413, [`the body is larger than ${maxBodyBytes} bytes`])
    return { bytes }
  }

  /** The JSON body, or the answer that refuses it. */
  const readJson = async (request: Incoming, variant: Variant): Promise<Outgoing | { readonly value: unknown }> => {
    const type = request.header("content-type") ?? ""
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      return failure(variant, 415, ["Content-Type must be application/json"])
    }
    const read = await readBytes(request, variant)
    if ("status" in read) return read
    const { bytes } = read
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    if (nestsDeeperThan(bytes, maxDepth)) {
      const message = `the body nests arrays and objects deeper than ${maxDepth} levels`
      return failure(variant, 400, variant === "emails" ? [`request: ${message}`] : [message])
    }
    try {
      if (!isUtf8(buffer)) throw new Error("not UTF-8")
      const value: unknown = JSON.parse(buffer.toString("utf8"))
      // Refused here, synchronously, a third of a million values are garbage before the next tick.
      const tooLarge = Wire.sizeProblems(value)
      return tooLarge.length === 0 ? { value } : failure(variant, 400, tooLarge)
    } catch {
      const message = "the body is not valid JSON"
      return failure(variant, 400, variant === "emails" ? [`request: ${message}`] : [message])
    }
  }

  const run = async (route: Route, request: Incoming): Promise<Outgoing> => {
    const given = route.auth === undefined ? undefined : credential(request, route.auth)
    if (route.auth !== undefined && given === undefined) {
      return failure(route.variant, 401, ["missing, invalid or revoked credential"])
    }
    // Plain steps, not a generator: this runs on every request.
    const authenticated =
      given === undefined
        ? Effect.succeed(anonymous)
        : Effect.flatMap(Organizations.Organizations, (organizations) => organizations.authenticate(given))
    // Read only once the credential is known good, so an unknown caller cannot make the server wait
    // for or buffer a body; read inside the effect, so each request enters the runtime once.
    const read =
      route.body === "json"
        ? Effect.promise(() => readJson(request, route.variant))
        : route.body === "raw"
          ? Effect.promise(() =>
              readBytes(request, route.variant).then((r) => ("status" in r ? r : { value: r.bytes }))
            )
          : undefined
    const exit = await runPromiseExit(
      Effect.flatMap(authenticated, (principal) =>
        read === undefined
          ? route.run({ request, principal, body: undefined })
          : Effect.flatMap(read, (body) =>
              "status" in body ? Effect.succeed(body) : route.run({ request, principal, body: body.value })
            )
      ).pipe(
        // A span per request when a tracer is provided; each path of the table is its own route.
        withSpan(`${route.method} ${request.pathname}`, {
          kind: "server",
          attributes: { "http.request.method": route.method, "http.route": request.pathname }
        })
      )
    )
    if (Exit.isSuccess(exit)) return exit.value
    const error = Cause.findErrorOption(exit.cause)
    const described = error._tag === "Some" ? describe(error.value) : undefined
    if (described !== undefined) {
      const { status, messages, headers, mayHaveBeenSent } = described
      return failure(route.variant, status, messages, headers, mayHaveBeenSent)
    }
    logError(`[mailroom] 500 on ${request.method} ${request.pathname}\n${Cause.pretty(exit.cause)}`)
    return internal(route.variant)
  }

  const handle = async (request: Incoming): Promise<Answer> => {
    try {
      const candidates = table.get(request.pathname)
      if (candidates === undefined) {
        storeRoutes ??= runPromiseExit(Effect.serviceOption(StoreRoutes.StoreRoutes)).then((exit) =>
          Exit.isSuccess(exit) ? Option.getOrUndefined(exit.value) : undefined
        )
        const contributed = await storeRoutes
        if (contributed !== undefined && request.pathname.startsWith(`${basePath}${contributed.pathPrefix}`)) {
          if (!contributed.methods.includes(request.method)) {
            const allow = contributed.methods.join(", ")
            return failure("other", 405, [`use ${allow} with a signed URL, not ${request.method}`], { allow })
          }
          const web = request.toWeb()
          // Never a parser's value serialised again in place of the file: refused, and said why.
          if (web instanceof Error) return failure("other", 500, [web.message])
          return { web: await contributed.handle(web), idleTimeoutMillis: contributed.idleTimeoutMillis }
        }
        return { ...failure("other", 404, [`no route for ${request.method} ${request.pathname}`]), unrouted: true }
      }
      const route = candidates.find((r) => r.method === request.method)
      if (route === undefined) {
        const allow = candidates.map((r) => r.method).join(", ")
        return failure(candidates[0]?.variant ?? "other", 405, [`use ${allow} for ${request.pathname}`], { allow })
      }
      return await run(route, request).catch((cause: unknown) => {
        logError(`[mailroom] 500 on ${request.method} ${request.pathname}\n${String((cause as Error)?.stack ?? cause)}`)
        return internal(route.variant)
      })
    } catch (cause) {
      logError(`[mailroom] 500 on ${request.method} ${request.pathname}\n${String((cause as Error)?.stack ?? cause)}`)
      return internal("other")
    }
  }
  return handle
}
