// mailroom's API as one Fastify plugin: registered under a prefix, its routes, the store's signed
// URLs and /openapi.json all follow that prefix, and its scope leaves bodies for mailroom to read.
import type * as Layer from "effect/Layer"
import type { FastifyPluginAsync } from "fastify"
import * as Mounted from "./internal/mounted.js"
import * as MailroomHandler from "./MailroomHandler.js"

/**
 * What the plugin serves: a `layer` it builds when registered (with the handler's options beside it)
 * and releases when the app closes, or `handlers` made elsewhere (`MailroomHandler.make` inside
 * Effect, or `fromLayer` shared with other code), which whoever made them awaits and releases.
 */
export type Options =
  | (MailroomHandler.Options & { readonly layer: Layer.Layer<MailroomHandler.Services, unknown> })
  | { readonly handlers: MailroomHandler.Handlers }

/**
 * Serves every mailroom route under the `prefix` it is registered with:
 * `await app.register(MailroomFastify.plugin, { prefix: "/mail", layer })`. Registration fails, naming
 * the setting, when the layer cannot be built, so `app.ready()` and `app.listen()` reject.
 */
export const plugin: FastifyPluginAsync<Options> = async (scope, options) => {
  let handlers: MailroomHandler.Handlers
  if ("layer" in options) {
    const { layer, ...handlerOptions } = options
    const started = MailroomHandler.fromLayer(layer, handlerOptions)
    scope.addHook("onClose", () => started.dispose())
    await started.ready
    handlers = started
  } else handlers = options.handlers
  const nodeAt = Mounted.nodeAt(handlers)
  if (nodeAt === undefined) {
    throw new Error("handlers: must be made by MailroomHandler.make or MailroomHandler.fromLayer")
  }
  // Fastify leaves the prefix in the URL: the handler takes it off, and signs links under it.
  const node = nodeAt(scope.prefix)
  // Only in this plugin's scope: bodies stay in the stream, where mailroom reads them with its own
  // limits and error shapes, and uploads byte for byte. The app's other routes keep Fastify's parsers.
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser("*", (_request, _payload, done) => done(null))
  scope.all("/*", async (request, reply) => {
    reply.hijack() // mailroom writes the answer on the raw response
    await node(request.raw, reply.raw)
  })
}
