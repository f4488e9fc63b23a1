// The Node handler at a mount the caller knows and the framework leaves in the URL (the Fastify
// plugin's prefix): kept off the public `Handlers`, which only the plugin in this package needs.
import type { IncomingMessage, ServerResponse } from "node:http"

/** A Node handler that takes `mount` off the front of each request's path before routing. */
export type NodeAt = (mount: string) => (req: IncomingMessage, res: ServerResponse) => Promise<void>

const registry = new WeakMap<object, NodeAt>()

export const register = <H extends object>(handlers: H, nodeAt: NodeAt): H => {
  registry.set(handlers, nodeAt)
  return handlers
}

/** The mount-aware Node handler of handlers made by `MailroomHandler.make` or `fromLayer`. */
export const nodeAt = (handlers: object): NodeAt | undefined => registry.get(handlers)
