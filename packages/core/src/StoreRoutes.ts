// The seam through which a store whose presigned URLs point back at the service (the local disk
// store) has them served by an HTTP handler: the store's layer provides `StoreRoutes` beside its
// ObjectStore, and `@mailroom/http` answers requests under `pathPrefix` by calling `handle`. Core
// knows nothing of HTTP beyond the Web `Request` and `Response` this takes and gives.
import * as Context from "effect/Context"

/** What the handler needs of a store that serves its own signed URLs. */
export interface StoreRoutes {
  /** Path below the service's base path, such as `/_mailroom/storage/`. Starts and ends with "/". */
  readonly pathPrefix: string
  /**
   * The methods `handle` answers. Others get a 405 naming these in `Allow`, without reaching the
   * store: some (TRACE, CONNECT) cannot even be made into a Web Request.
   */
  readonly methods: ReadonlyArray<string>
  readonly handle: (request: Request) => Promise<Response>
  /**
   * Milliseconds a transfer's connection may go without a byte read or written before the Node
   * handler closes it: a client that stops reading an answer the store already handed over (a small
   * file, all in the socket's buffers) does not keep its connection for ever. Default: no limit.
   */
  readonly idleTimeoutMillis?: number
}

/** The service key: the disk store's layer provides it, `@mailroom/http`'s handler reads it when present. */
export const StoreRoutes: Context.Service<StoreRoutes, StoreRoutes> = Context.Service("@mailroom/http/StoreRoutes")

/**
 * The path the request being served reached the service's base routes at, as the app serves them:
 * the framework's mount (Express's `app.use("/mail", ...)`, the Fastify plugin's prefix) followed by
 * the handler's `basePath`, e.g. "/mail"; "" at the root and outside a request. Set by the handler
 * while an attachment operation runs, so a store whose URLs point back here can sign them under it.
 */
export const MountPath: Context.Reference<string> = Context.Reference("@mailroom/http/StoreRoutes/MountPath", {
  defaultValue: () => ""
})
