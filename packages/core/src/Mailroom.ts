// Everything wired together: one layer for Effect users, and a Promise facade for backends that do
// not use Effect, whose methods reject with the same typed errors.
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Attachments from "./Attachments.js"
import type { EmailProvider } from "./EmailProvider.js"
import * as IdempotencyStore from "./IdempotencyStore.js"
import { disposing, inFlight } from "./internal/inFlight.js"
import type * as MailEvent from "./MailEvent.js"
import * as MailEvents from "./MailEvents.js"
import * as Mailer from "./Mailer.js"
import { type NotFound, Unauthorized, type Unavailable } from "./MailroomError.js"
import * as MessageLog from "./MessageLog.js"
import * as Messages from "./Messages.js"
import type { ObjectStore } from "./ObjectStore.js"
import { Organizations, type Principal } from "./Organizations.js"
import * as SendQueue from "./SendQueue.js"
import type * as SendRateLimiter from "./SendRateLimiter.js"
import * as Suppressions from "./Suppressions.js"
import type * as Wire from "./Wire.js"

/** The layers to build on; `E` is whatever building them can fail with (a `ConfigError` from `layerConfig`). */
export interface Options<E = never> {
  readonly provider: Layer.Layer<EmailProvider, E>
  readonly store: Layer.Layer<ObjectStore, E>
  readonly organizations: Layer.Layer<Organizations, E>
  /** Default: in memory, for a single instance. */
  readonly idempotency?: Layer.Layer<IdempotencyStore.IdempotencyStore, E>
  /**
   * Where messages are recorded and suppressions kept (`@mailroom/sql` on SQLite or PostgreSQL).
   * Default: in memory, forgotten on restart.
   */
  readonly messages?: Layer.Layer<MessageLog.MessageLog | Suppressions.Suppressions, E>
  /**
   * Where delivery events go. Default `MailEvents.layer()`: in-process subscribers only;
   * `WebhookDelivery.layer(...)` also delivers them to each organisation's webhook URL.
   */
  readonly events?: Layer.Layer<MailEvents.MailEvents, E, Organizations>
  readonly attachments?: Attachments.Config
  readonly mailer?: Mailer.Config
  /**
   * Where scheduled messages wait for their time (`SendQueue.layerSql` on the message log's database).
   * Default: in memory (`SendQueue.layerMemory`), as the default message log is.
   */
  readonly queue?: Layer.Layer<SendQueue.SendQueue, E>
  /** The worker that sends scheduled messages at their time (`SendQueue.worker`); `false` runs none here. Default: on. */
  readonly worker?: SendQueue.WorkerOptions | false
  /**
   * Paces sends to the provider's rate, one token per recipient (`SendRateLimiter.layerMemory`, or on
   * a shared store such as `@mailroom/redis`'s). Default: none, sends go as fast as they come.
   */
  readonly rateLimiter?: Layer.Layer<SendRateLimiter.SendRateLimiter, E>
}

/** What `layer` provides: the operation services, and the layers they were built from. */
export type Services =
  | Mailer.Mailer
  | Attachments.Attachments
  | Messages.Messages
  | Organizations
  | ObjectStore
  | EmailProvider
  | IdempotencyStore.IdempotencyStore
  | MailEvents.MailEvents
  | MessageLog.MessageLog
  | Suppressions.Suppressions
  | SendQueue.SendQueue

/**
 * Mailer, Attachments and Messages from the given provider, store and organisations, and the worker
 * that sends scheduled messages. The provider is given the same `MailEvents`, so a provider that
 * reports deliveries itself (the outbox) publishes them there.
 */
export const layer = <E = never>(options: Options<E>): Layer.Layer<Services, E> => {
  const messages = options.messages ?? Layer.merge(MessageLog.layerMemory(), Suppressions.layerMemory())
  const events = (options.events ?? MailEvents.layer()).pipe(
    Layer.provide(Layer.merge(options.organizations, messages))
  )
  const base = Layer.mergeAll(
    messages,
    options.provider.pipe(Layer.provide(events)),
    options.store,
    options.organizations,
    options.idempotency ?? IdempotencyStore.layerMemory(),
    options.queue ?? SendQueue.layerMemory(),
    events
  )
  const mailer =
    options.rateLimiter === undefined
      ? Mailer.layer(options.mailer)
      : Mailer.layer(options.mailer).pipe(Layer.provide(options.rateLimiter))
  const services = Layer.mergeAll(mailer, Attachments.layer(options.attachments), Messages.layer).pipe(
    Layer.provideMerge(base)
  )
  return options.worker === false
    ? services
    : Layer.merge(services, SendQueue.layerWorker(options.worker).pipe(Layer.provide(services)))
}

/** Who a call is made for: an organisation id for trusted in-process callers, or a credential to check. */
export type Caller = { readonly orgId: string } | { readonly apiKey: string } | { readonly accessToken: string }

type Target = { readonly key: string } | { readonly attachmentId: string }

/**
 * Every call takes whom it is made for first, or leaves it out when the organisations are one
 * (`Organizations.single`, or `layerStatic` with one): `send(request)` is `send({ orgId }, request)`.
 */
export interface Client {
  /** Attachments are stored files (`key`) or the bytes you hold (`content`: a Uint8Array, or text). */
  readonly send: {
    <R extends typeof Wire.InProcessSendRequest.Encoded>(
      caller: Caller,
      request: R,
      options?: Mailer.SendOptions
    ): Promise<Mailer.SendOutcome<Mailer.ResponseOf<R>>>
    <R extends typeof Wire.InProcessSendRequest.Encoded>(
      request: R,
      options?: Mailer.SendOptions
    ): Promise<Mailer.SendOutcome<Mailer.ResponseOf<R>>>
  }
  readonly presign: {
    (caller: Caller, request: typeof Wire.PresignRequest.Encoded): Promise<Wire.PresignResponse>
    (request: typeof Wire.PresignRequest.Encoded): Promise<Wire.PresignResponse>
  }
  readonly download: {
    (caller: Caller, target: Target): Promise<Wire.DownloadResponse>
    (target: Target): Promise<Wire.DownloadResponse>
  }
  readonly delete: {
    (caller: Caller, target: Target): Promise<Wire.DeleteByKeyResponse | Wire.DeleteByIdResponse>
    (target: Target): Promise<Wire.DeleteByKeyResponse | Wire.DeleteByIdResponse>
  }
  /**
   * Sends up to 100 messages (`POST /emails/batch`), each on its own: accepted ones in `data`, refused
   * ones in `errors`, by index. One `idempotencyKey` covers the batch.
   */
  readonly sendBatch: {
    (
      caller: Caller,
      requests: ReadonlyArray<typeof Wire.SendEmailRequest.Encoded>,
      options?: Mailer.SendOptions
    ): Promise<Mailer.BatchOutcome>
    (
      requests: ReadonlyArray<typeof Wire.SendEmailRequest.Encoded>,
      options?: Mailer.SendOptions
    ): Promise<Mailer.BatchOutcome>
  }
  /** Cancels a scheduled message (`POST /emails/{id}/cancel`); rejects with `Conflict` once it started to send. */
  readonly cancelEmail: {
    (caller: Caller, id: string): Promise<Wire.CancelResponse>
    (id: string): Promise<Wire.CancelResponse>
  }
  /** Moves a scheduled message to another time (`PATCH /emails/{id}`); rejects with `Conflict` once it started to send. */
  readonly rescheduleEmail: {
    (caller: Caller, id: string, scheduledAt: string): Promise<Wire.ScheduledEmailResponse>
    (id: string, scheduledAt: string): Promise<Wire.ScheduledEmailResponse>
  }
  /** A message's record (`GET /emails/{id}`): each recipient's state and the delivery events. */
  readonly getEmail: {
    (caller: Caller, id: string): Promise<MessageLog.EmailDetail>
    (id: string): Promise<MessageLog.EmailDetail>
  }
  /** One page of records, newest first (`GET /emails`); pass its `next_cursor` as `cursor` for the next. */
  readonly listEmails: {
    (caller: Caller, query?: Messages.ListEmailsRequest): Promise<Wire.EmailList>
    (query?: Messages.ListEmailsRequest): Promise<Wire.EmailList>
  }
  /** Stops sends to an address (`POST /suppressions`); `created` is false when it was on the list already. */
  readonly suppress: {
    (caller: Caller, request: typeof Wire.SuppressRequest.Encoded): Promise<Messages.Suppressed>
    (request: typeof Wire.SuppressRequest.Encoded): Promise<Messages.Suppressed>
  }
  /** Takes an address off the list (`DELETE /suppressions/{email}`); rejects with `NotFound` when it is not on it. */
  readonly unsuppress: {
    (caller: Caller, email: string): Promise<Wire.UnsuppressResponse>
    (email: string): Promise<Wire.UnsuppressResponse>
  }
  /** One page of the suppression list, newest first (`GET /suppressions`). */
  readonly listSuppressions: {
    (caller: Caller, query?: Messages.ListSuppressionsRequest): Promise<Wire.SuppressionList>
    (query?: Messages.ListSuppressionsRequest): Promise<Wire.SuppressionList>
  }
  /**
   * Calls `listener` with each delivery event from now on (of one organisation, or of all), in order,
   * one at a time; answers the function that stops it. A listener that throws or rejects is logged and
   * keeps its subscription. A live feed: for delivery that survives a restart, use `WebhookDelivery`.
   */
  readonly onEvent: (
    listener: (event: MailEvent.MailEvent) => void | Promise<void>,
    options?: MailEvents.SubscribeOptions
  ) => Promise<() => Promise<void>>
  /**
   * Settles once the layers are built, which starts at once. Rejects when they cannot be built, saying
   * why (`mailroom could not start: ... at ["SES_REGION"]` for a missing variable): await it at
   * start-up. Calls made earlier wait for it.
   */
  readonly ready: Promise<void>
  /**
   * Waits for the calls already running (a send waiting on its provider answers as it ends), then
   * releases what the layers hold (clients, connections). Calls made from then on reject with
   * `Unavailable`, nothing done. To bound the wait, abort `mailer.shutdown`.
   */
  readonly dispose: () => Promise<void>
}

const isCaller = (value: unknown): value is Caller =>
  typeof value === "object" &&
  value !== null &&
  ("orgId" in value || "apiKey" in value || "accessToken" in value) &&
  !("from" in value || "filename" in value || "key" in value || "attachmentId" in value)

const principal = (
  caller: Caller | undefined
): Effect.Effect<Principal, NotFound | Unauthorized | Unavailable, Organizations> =>
  Effect.flatMap(
    Organizations,
    (organizations): Effect.Effect<Principal, NotFound | Unauthorized | Unavailable> =>
      caller === undefined
        ? organizations.sole === undefined
          ? Effect.fail(
              new Unauthorized({
                message:
                  "say whom the call is for ({ orgId }, { apiKey } or { accessToken }): there is not exactly one organisation"
              })
            )
          : Effect.succeed(organizations.sole)
        : "orgId" in caller
          ? organizations.find(caller.orgId)
          : "apiKey" in caller
            ? organizations.authenticate({ kind: "apiKey", value: caller.apiKey })
            : organizations.authenticate({ kind: "accessToken", value: caller.accessToken })
  )

/** Why building the layers failed, as one line that names the setting (a ConfigError names the variable). */
const startupError = (cause: unknown): Error =>
  new Error(`mailroom could not start: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })

/**
 * A Promise client. Each method rejects with the typed error of the operation (ValidationError,
 * NotFound, ProviderError, ObjectStoreError...), which `isMailroomError`, `isProviderError` and
 * `isObjectStoreError` recognise. The layers are
 * built at once: see `ready`.
 */
export const make = <E = never>(options: Options<E>): Client => {
  const runtime = ManagedRuntime.make(layer(options))
  // Not caught here: a caller who never awaits `ready` still learns of a broken configuration at
  // start-up, as an unhandled rejection naming it, rather than from every call later.
  const ready = runtime.context().then(
    () => undefined,
    (cause: unknown) => Promise.reject(startupError(cause))
  )
  const calls = inFlight()
  const run = <A>(effect: Effect.Effect<A, unknown, Services>): Promise<A> =>
    calls.isClosing() ? Promise.reject(disposing()) : calls.track(runtime.runPromise(effect))
  /** Splits `(caller, ...rest)` from `(...rest)`, then runs `f` for the caller's organisation. */
  const as =
    <Rest extends Array<unknown>, A>(
      f: (p: Principal, ...rest: Rest) => Effect.Effect<A, unknown, Services>
    ): ((...args: Array<unknown>) => Promise<A>) =>
    (...args) => {
      const [caller, rest] = isCaller(args[0]) ? [args[0], args.slice(1)] : [undefined, args]
      return run(Effect.flatMap(principal(caller), (p) => f(p, ...(rest as Rest))))
    }
  return {
    // The answer's type follows the request's, as `Mailer.sendInProcess`'s does.
    send: as((p, request: typeof Wire.InProcessSendRequest.Encoded, sendOptions?: Mailer.SendOptions) =>
      Effect.flatMap(Mailer.Mailer, (m) => m.sendInProcess(p, request, sendOptions))
    ) as Client["send"],
    presign: as((p, request: typeof Wire.PresignRequest.Encoded) =>
      Effect.flatMap(Attachments.Attachments, (a) => a.presign(p, request))
    ),
    download: as((p, target: Target) =>
      Effect.flatMap(Attachments.Attachments, (a) =>
        "key" in target ? a.download(p, target.key) : a.downloadById(p, target.attachmentId)
      )
    ),
    delete: as((p, target: Target) =>
      Effect.flatMap(
        Attachments.Attachments,
        (a): Effect.Effect<Wire.DeleteByKeyResponse | Wire.DeleteByIdResponse, unknown> =>
          "key" in target ? a.delete(p, target.key) : a.deleteById(p, target.attachmentId)
      )
    ),
    sendBatch: as(
      (p, requests: ReadonlyArray<typeof Wire.SendEmailRequest.Encoded>, sendOptions?: Mailer.SendOptions) =>
        Effect.flatMap(Mailer.Mailer, (m) => m.sendBatch(p, requests, sendOptions))
    ),
    cancelEmail: as((p, id: string) => Effect.flatMap(Mailer.Mailer, (m) => m.cancel(p, id))),
    rescheduleEmail: as((p, id: string, scheduledAt: string) =>
      Effect.flatMap(Mailer.Mailer, (m) => m.reschedule(p, id, { scheduled_at: scheduledAt }))
    ),
    getEmail: as((p, id: string) => Effect.flatMap(Messages.Messages, (m) => m.get(p, id))),
    listEmails: as((p, query?: Messages.ListEmailsRequest) =>
      Effect.flatMap(Messages.Messages, (m) => m.list(p, query ?? {}))
    ),
    suppress: as((p, request: typeof Wire.SuppressRequest.Encoded) =>
      Effect.flatMap(Messages.Messages, (m) => m.suppress(p, request))
    ),
    unsuppress: as((p, email: string) => Effect.flatMap(Messages.Messages, (m) => m.unsuppress(p, email))),
    listSuppressions: as((p, query?: Messages.ListSuppressionsRequest) =>
      Effect.flatMap(Messages.Messages, (m) => m.listSuppressions(p, query ?? {}))
    ),
    onEvent: async (listener, subscribeOptions) => {
      const scope = await run(Scope.make())
      await run(
        Effect.gen(function* () {
          const events = yield* MailEvents.MailEvents
          const stream = yield* events.subscribe(subscribeOptions).pipe(Scope.provide(scope))
          yield* Stream.runForEach(stream, (event) =>
            Effect.tryPromise(async () => listener(event)).pipe(
              Effect.catch((error) =>
                Effect.logError(`[mailroom] an event listener failed on ${event.id}: ${String(error.cause)}`)
              )
            )
          ).pipe(Effect.forkIn(scope))
        })
      )
      // Closing the scope needs no service: it works before and after dispose alike.
      return () => Effect.runPromise(Scope.close(scope, Exit.void))
    },
    ready,
    dispose: async () => {
      await calls.drain()
      await runtime.dispose()
    }
  }
}
