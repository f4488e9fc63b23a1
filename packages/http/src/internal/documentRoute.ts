// `GET {basePath}/openapi.json`: the document as the clients of each mount call it, its paths under
// the mount the request came in by, or under `publicUrl`'s path when one says where clients are.
import { Attachments } from "@mailroom/core"
import * as Effect from "effect/Effect"
import * as OpenApi from "../OpenApi.js"
import { type Outgoing, ok } from "./responses.js"
import type { Route } from "./router.js"

export interface Settings {
  readonly basePath: string
  readonly v1BasePath: string
  readonly publicUrl: string | undefined
  readonly webhooks: ReadonlyArray<string>
}

/** The path of `publicUrl`, without a trailing "/": "" for an origin alone (or a value that is no URL). */
const pathOf = (publicUrl: string | undefined) =>
  publicUrl === undefined ? "" : (URL.parse(publicUrl)?.pathname ?? "/").replace(/\/+$/, "")

export const make = ({ basePath, v1BasePath, publicUrl, webhooks }: Settings): Route => {
  // A publicUrl with a path is where clients reach mailroom (a proxy in front may strip or add a
  // prefix): the paths are below it, whatever the app's own. An origin alone is followed by the mount.
  const below = pathOf(publicUrl) !== ""
  const v1Below = v1BasePath.startsWith(basePath) ? v1BasePath.slice(basePath.length) : v1BasePath
  const documents = new Map<string, Outgoing>()
  return {
    method: "GET",
    variant: "other",
    run: ({ request }) =>
      Effect.gen(function* () {
        const mount = below ? "" : request.mount
        const cached = documents.get(mount)
        if (cached !== undefined) return cached
        const attachments = yield* Attachments.Attachments
        const document = ok(
          200,
          OpenApi.document({
            basePath: below ? "" : `${mount}${basePath}`,
            v1BasePath: below ? v1Below : `${mount}${v1BasePath}`,
            webhooks,
            maxUploadBytes: attachments.maxUploadBytes,
            requireContentLength: attachments.requiresContentLength,
            ...(publicUrl === undefined ? {} : { publicUrl })
          })
        )
        // A mount with a parameter (`app.use("/:tenant", ...)`) has no end of values: a few are kept.
        if (documents.size < 16) documents.set(mount, document)
        return document
      })
  }
}
