// The requests no route of the table serves: a store's signed URLs (StoreRoutes) when it serves
// them itself under `{basePath}{pathPrefix}`, else a 404 naming the path as the client sent it.
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as StoreRoutes from "../StoreRoutes.js"
import { failure } from "./responses.js"
import type { Answer, Incoming, Runner } from "./router.js"

export const make = (runPromiseExit: Runner, basePath: string) => {
  // Stores whose URLs point back here (the local disk store) contribute routes; looked up once.
  let storeRoutes: Promise<StoreRoutes.StoreRoutes | undefined> | undefined
  return async (request: Incoming): Promise<Answer> => {
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
    const path = `${request.mount}${request.pathname}`
    return { ...failure("other", 404, [`no route for ${request.method} ${path}`]), unrouted: true }
  }
}
