// The route table of DESIGN sections 3 and 7 over a transport-neutral request, so the Node and the
// Web handlers answer byte for byte alike.

import { isUtf8 } from "node:buffer"
import {
  Attachments,
  type EventSource,
  MailEvents,
  type Mailer,
  type Messages,
  Organizations,
  Wire
} from "@mailroom/core"
import { withSpan } from "@mailroom/core/adapter"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as StoreRoutes from "../StoreRoutes.js"
import * as DocumentRoute from "./documentRoute.js"
import { maxDepth, nestsDeeperThan } from "./json.js"
import * as MessageRoutes from "./messageRoutes.js"
import { singleQuery } from "./query.js"
import { causeOf, describe, failure, internal, type Outgoing, ok, type Variant } from "./responses.js"
import * as StoreRoute from "./storeRoute.js"
import { makeWebhookBody } from "./webhooks.js"

/** What a transport hands the router. */
export interface Incoming {
  readonly method: string
  /** The path routed on: below any mount the framework took off. */
  readonly pathname: string
  /** The path a framework took off before the handler (`req.baseUrl`), or "": for links, not routing. */
  readonly mount: string
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
   * Where clients reach this API, e.g. "https://mail.example.com": `servers` in `GET /openapi.json`,
   * whose paths then carry the mount; with a path (a proxy in front strips or adds a prefix), the
   * paths are below it. Default: none listed.
   */
  readonly publicUrl?: string
  /**
   * The path mailroom is at in the URLs the handler gets ("/mail" for Hono's `/mail/*`). Not where the
   * framework takes the mount off and says so (Express's `app.use("/mail")`, the Fastify plugin). Default "".
   */
  readonly basePath?: string
  /** Prefix before `/v1` of the versioned variant's paths, when it is not `basePath`. Default `basePath`. */
  readonly v1BasePath?: string
  /** Largest JSON body accepted, in bytes. Default 1 MiB. */
  readonly maxBodyBytes?: number
  /** Largest body of `POST /emails/batch` (up to 100 messages), in bytes. Default ten times `maxBodyBytes` (10 MiB). */
  readonly maxBatchBodyBytes?: number
  /** Where the causes of 5xx answers go, one line per request. Default: console.error. Never given a credential. */
  readonly logError?: (message: string) => void
  /**
   * Providers' delivery webhooks, each served at `POST {basePath}/webhooks/{name}` (`SesEventSource`,
   * `PostmarkEventSource`); their events go to core's `MailEvents`. Default: none.
   */
  readonly eventSources?: ReadonlyArray<EventSource.EventSource>
  /**
   * Webhook bodies read at once whose headers prove nothing (an SNS message is verified by the
   * signature in its body); one more is answered 503 with `Retry-After`. Default 64.
   */
  readonly maxUnverifiedWebhookBodies?: number
  /** How long such a body may take to arrive: then 408 and the connection is closed. Default 10 seconds. */
  readonly unverifiedWebhookBodyTimeout?: Duration.Input
}

export type Services =
  | Mailer.Mailer
  | Attachments.Attachments
  | Messages.Messages
  | Organizations.Organizations
  | MailEvents.MailEvents

type Credential = "apiKey" | "bearer"

export interface Route {
  readonly method: string
  readonly variant: Variant
  readonly auth?: Credential
  /**
   * The body, parsed as JSON, read once the credential is known good (webhooks read their own);
   * `batch` allows `maxBatchBodyBytes`.
   */
  readonly body?: "json" | "batch"
  readonly run: (context: Context) => Effect.Effect<Outgoing, unknown, Services>
}

interface Context {
  readonly request: Incoming
  readonly principal: Organizations.Principal
  readonly body: unknown
  /** The last path segment of a route with a parameter (`/emails/{id}`), still percent-encoded. */
  readonly param: string | undefined
}

/** The principal of a route that takes no credential (none reads it). */
const anonymous: Organizations.Principal = { orgId: "", slug: "" }

const trimSlash = (path: string | undefined) => (path ?? "").replace(/\/+$/, "")

/** A webhook's body, read as its source allows, or the answer that refuses it. */
type WebhookBody = (
  source: EventSource.EventSource,
  request: Incoming
) => Promise<Outgoing | { readonly bytes: Uint8Array }>

const routes = (
  basePath: string,
  v1BasePath: string,
  eventSources: ReadonlyArray<EventSource.EventSource>,
  publicUrl: string | undefined,
  webhookBody: WebhookBody
): ReadonlyMap<string, ReadonlyArray<Route>> => {
  const attachments = Attachments.Attachments
  const decodeByKey = Wire.decode(Wire.DownloadByKeyQuery)
  const decodeById = Wire.decode(Wire.DownloadByIdQuery)
  const decodeDelete = Wire.decode(Wire.DeleteByIdRequest)
  const table = new Map<string, Array<Route>>()
  const add = (path: string, route: Route) => table.set(path, [...(table.get(path) ?? []), route])

  for (const [path, route] of MessageRoutes.exact(basePath)) add(path, route)
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
      run: ({ request }) =>
        Effect.gen(function* () {
          const read = yield* Effect.promise(() => webhookBody(source, request))
          if ("status" in read) return read
          // The source verifies the caller; nothing is published from a request it refuses.
          const received = yield* source.receive({ header: request.header, body: read.bytes })
          const published = yield* (yield* MailEvents.MailEvents).publish(received)
          return ok(200, { events: published.length })
        })
    })
  }
  add(
    `${basePath}/openapi.json`,
    DocumentRoute.make({ basePath, v1BasePath, publicUrl, webhooks: eventSources.map((s) => s.name) })
  )
  return table
}

const bearer = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

/** Runs an effect that needs the services; a ManagedRuntime's runPromiseExit, or one made from a Context. */
export type Runner = <A, E>(effect: Effect.Effect<A, E, Services>) => Promise<Exit.Exit<A, unknown>>

/** Builds the request handler over whatever runs effects with the services. */
export const make = (runPromiseExit: Runner, options: Options = {}) => {
  const basePath = trimSlash(options.basePath)
  const v1BasePath = trimSlash(options.v1BasePath ?? options.basePath)
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024
  const maxBatchBodyBytes = options.maxBatchBodyBytes ?? 10 * maxBodyBytes
  const logError = options.logError ?? ((message: string) => console.error(message))
  const webhookBody = makeWebhookBody(
    {
      maxUnverifiedBodies: options.maxUnverifiedWebhookBodies ?? 64,
      unverifiedBodyTimeoutMs: Duration.toMillis(
        Duration.fromInputUnsafe(options.unverifiedWebhookBodyTimeout ?? "10 seconds")
      )
    },
    (request, limit) => readBytes(request, "other", limit)
  )
  const table = routes(basePath, v1BasePath, options.eventSources ?? [], options.publicUrl, (source, request) =>
    webhookBody(source, request, maxBodyBytes)
  )
  // Looked up only when no fixed path matches: POST /emails never reaches them.
  const patterns = MessageRoutes.patterns(basePath)
  const unrouted = StoreRoute.make(runPromiseExit, basePath)

  const credential = (request: Incoming, kind: Credential): Organizations.Credential | undefined => {
    if (kind === "apiKey") {
      const value = request.header("x-api-key")
      return value === undefined || value === "" ? undefined : { kind: "apiKey", value }
    }
    const match = bearer.exec(request.header("authorization") ?? "")
    return match?.[1] === undefined ? undefined : { kind: "accessToken", value: match[1] }
  }

  /** The body's bytes, or the answer that refuses it. */
  const readBytes = async (
    request: Incoming,
    variant: Variant,
    limit = maxBodyBytes
  ): Promise<Outgoing | { readonly bytes: Uint8Array }> => {
    const declared = Number(request.header("content-length"))
    if (declared > limit) return failure(variant, 413, [`the body is larger than ${limit} bytes`])
    let bytes: Uint8Array | "too-large"
    try {
      bytes = await request.body(limit)
    } catch {
      // The client went away mid-body: nothing to log, and whatever is answered goes nowhere.
      return failure(
        variant,
        400,
        variant === "emails" ? ["request: the body could not be read"] : ["the body could not be read"]
      )
    }
    if (bytes === "too-large") return failure(variant, 413, [`the body is larger than ${limit} bytes`])
    return { bytes }
  }

  /** The JSON body, or the answer that refuses it. */
  const readJson = async (
    request: Incoming,
    variant: Variant,
    limit = maxBodyBytes
  ): Promise<Outgoing | { readonly value: unknown }> => {
    const type = request.header("content-type") ?? ""
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      return failure(variant, 415, ["Content-Type must be application/json"])
    }
    const read = await readBytes(request, variant, limit)
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

  /** `template` is the route's path as the document writes it (`/emails/{id}`): spans and logs never see a parameter. */
  const run = async (
    route: Route,
    request: Incoming,
    template: string,
    param: string | undefined
  ): Promise<Outgoing> => {
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
      route.body === undefined
        ? undefined
        : Effect.promise(() =>
            readJson(request, route.variant, route.body === "batch" ? maxBatchBodyBytes : maxBodyBytes)
          )
    const answered = Effect.flatMap(authenticated, (principal) =>
      read === undefined
        ? route.run({ request, principal, body: undefined, param })
        : Effect.flatMap(read, (body) =>
            "status" in body ? Effect.succeed(body) : route.run({ request, principal, body: body.value, param })
          )
    )
    const exit = await runPromiseExit(
      // The attachment operations (both variants) hand out the store's URLs, which a store serving
      // them itself signs under this request's mount; no other route pays for saying it.
      (route.variant === "attachments" || route.variant === "v1"
        ? Effect.provideService(answered, StoreRoutes.MountPath, `${request.mount}${basePath}`)
        : answered
      ).pipe(
        // A span per request when a tracer is provided; each path of the table is its own route.
        withSpan(`${route.method} ${template}`, {
          kind: "server",
          attributes: { "http.request.method": route.method, "http.route": template }
        })
      )
    )
    if (Exit.isSuccess(exit)) return exit.value
    const error = Cause.findErrorOption(exit.cause)
    const described = error._tag === "Some" ? describe(error.value) : undefined
    if (described !== undefined) {
      const { status, messages, headers, mayHaveBeenSent } = described
      // A 5xx's answer says little on purpose; whoever runs the service needs the adapter's own words.
      if (status >= 500) logError(`[mailroom] ${status} on ${request.method} ${template}: ${causeOf(error)}`)
      // Only a send's 503 says whether the provider may have the message: a read's would mean nothing.
      const isSend = route.method === "POST" && template === `${basePath}/emails`
      return failure(route.variant, status, messages, headers, isSend ? (mayHaveBeenSent ?? false) : undefined)
    }
    logError(`[mailroom] 500 on ${request.method} ${template}\n${Cause.pretty(exit.cause)}`)
    return internal(route.variant)
  }

  const handle = async (request: Incoming): Promise<Answer> => {
    try {
      let candidates = table.get(request.pathname)
      let template = request.pathname
      let param: string | undefined
      if (candidates === undefined) {
        const matched = MessageRoutes.match(patterns, request.pathname)
        if (matched !== undefined) {
          candidates = matched.pattern.routes
          template = matched.pattern.template
          param = matched.param
        }
      }
      if (candidates === undefined) return await unrouted(request)
      const route = candidates.find((r) => r.method === request.method)
      if (route === undefined) {
        const allow = candidates.map((r) => r.method).join(", ")
        return failure(
          candidates[0]?.variant ?? "other",
          405,
          [`use ${allow} for ${request.mount}${request.pathname}`],
          { allow }
        )
      }
      return await run(route, request, template, param).catch((cause: unknown) => {
        logError(`[mailroom] 500 on ${request.method} ${template}\n${String((cause as Error)?.stack ?? cause)}`)
        return internal(route.variant)
      })
    } catch (cause) {
      logError(`[mailroom] 500 on ${request.method} ${request.pathname}\n${String((cause as Error)?.stack ?? cause)}`)
      return internal("other")
    }
  }
  return handle
}
