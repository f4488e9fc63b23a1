// Attachment operations of the API: presigned uploads, download URLs and deletion, by storage key
// or by `att_` id, each confined to the caller's own `attachments/{orgId}/` prefix.
import { randomBytes } from "node:crypto"
import { Clock, Context, Effect, Layer } from "effect"
import { sanitizeFilename } from "./internal/filename.js"
import { Forbidden, NotFound, ValidationError } from "./MailroomError.js"
import { type ObjectNotFound, ObjectStore, type ObjectStoreError } from "./ObjectStore.js"
import type { Principal } from "./Organizations.js"
import * as Wire from "./Wire.js"

export interface Config {
  /** Largest upload a presigned URL is issued for when `content_length` is declared. Default 25 MiB. */
  readonly maxUploadBytes?: number
  /** Lifetime of upload and download URLs in seconds. Default 3600, as the spec says. */
  readonly expiresIn?: number
}

export const defaultMaxUploadBytes = 25 * 1024 * 1024

export interface Attachments {
  readonly presign: (
    principal: Principal,
    request: typeof Wire.PresignRequest.Encoded
  ) => Effect.Effect<Wire.PresignResponse, ValidationError | Forbidden | ObjectStoreError>
  readonly download: (
    principal: Principal,
    key: string
  ) => Effect.Effect<Wire.DownloadResponse, NotFound | ObjectStoreError>
  readonly downloadById: (
    principal: Principal,
    attachmentId: string
  ) => Effect.Effect<Wire.DownloadResponse, NotFound | ObjectStoreError>
  readonly delete: (
    principal: Principal,
    key: string
  ) => Effect.Effect<Wire.DeleteByKeyResponse, NotFound | ObjectStoreError>
  readonly deleteById: (
    principal: Principal,
    attachmentId: string
  ) => Effect.Effect<Wire.DeleteByIdResponse, NotFound | ObjectStoreError>
}

export const Attachments: Context.Service<Attachments, Attachments> = Context.Service("@mailroom/core/Attachments")

const prefixOf = (orgId: string) => `attachments/${orgId}/`

/**
 * True when `key` is an attachment key of this organisation: `attachments/{orgId}/{timestamp}-{name}`,
 * one segment after the prefix (which also keeps the id index objects out of reach by key).
 */
export const isOwnKey = (principal: Principal, key: string): boolean => {
  const prefix = prefixOf(principal.orgId)
  return key.startsWith(prefix) && /^[0-9]+-[^/\\]+$/.test(key.slice(prefix.length))
}

/** The file name part of an attachment key. */
export const filenameOf = (key: string): string => key.slice(key.lastIndexOf("/") + 1).replace(/^[0-9]+-/, "")

const indexKey = (orgId: string, attachmentId: string) => `${prefixOf(orgId)}.ids/${attachmentId}.json`

const notFound = (what: string) => new NotFound({ message: `attachment not found: ${what}` })

export const make = Effect.fnUntraced(function* (config: Config = {}) {
  const store = yield* ObjectStore
  const maxUploadBytes = config.maxUploadBytes ?? defaultMaxUploadBytes
  const expiresIn = config.expiresIn ?? 3600
  const decodePresign = Wire.decode(Wire.PresignRequest)

  // Millisecond timestamps that never repeat in this process, so two presigns of one file name
  // at the same instant still get two keys.
  let lastTimestamp = 0
  const nextTimestamp = Effect.map(Clock.currentTimeMillis, (now) => {
    lastTimestamp = Math.max(now, lastTimestamp + 1)
    return lastTimestamp
  })

  const ownedOr404 = (principal: Principal, key: string) =>
    isOwnKey(principal, key) ? Effect.succeed(key) : Effect.fail(notFound(key))

  const keyOfId = (principal: Principal, attachmentId: string) =>
    Effect.gen(function* () {
      if (!/^att_[0-9a-f]{1,64}$/.test(attachmentId)) return yield* notFound(attachmentId)
      const bytes = yield* store
        .get(indexKey(principal.orgId, attachmentId))
        .pipe(Effect.catchTag("ObjectNotFound", () => Effect.fail(notFound(attachmentId))))
      const key = (JSON.parse(new TextDecoder().decode(bytes)) as { key?: unknown }).key
      if (typeof key !== "string" || !isOwnKey(principal, key)) return yield* notFound(attachmentId)
      return key
    })

  const downloadUrl = (key: string) =>
    Effect.gen(function* () {
      yield* store.head(key).pipe(Effect.catchTag("ObjectNotFound", () => Effect.fail(notFound(key))))
      const url = yield* store.presignGet({ key, expiresIn, filename: filenameOf(key) })
      return { download_url: url, expires_in: expiresIn }
    })

  const deleteKey = (key: string) =>
    store.delete(key).pipe(Effect.catchTag("ObjectNotFound", (e: ObjectNotFound) => Effect.fail(notFound(e.key))))

  return Attachments.of({
    presign: (principal, request) =>
      Effect.gen(function* () {
        const input = yield* decodePresign(request)
        if (input.org_id !== undefined && input.org_id !== principal.orgId) {
          return yield* new Forbidden({ message: "org_id is not the organization of this credential" })
        }
        if (input.content_length !== undefined && input.content_length > maxUploadBytes) {
          return yield* new ValidationError({
            errors: [`content_length: must be at most ${maxUploadBytes} bytes`]
          })
        }
        const contentType = input.content_type ?? "application/octet-stream"
        const key = `${prefixOf(principal.orgId)}${yield* nextTimestamp}-${sanitizeFilename(input.filename)}`
        const attachmentId = `att_${randomBytes(16).toString("hex")}`
        const url = yield* store.presignPut({
          key,
          contentType,
          expiresIn,
          ...(input.content_length === undefined ? {} : { contentLength: input.content_length })
        })
        yield* store.put(
          indexKey(principal.orgId, attachmentId),
          new TextEncoder().encode(JSON.stringify({ key })),
          "application/json"
        )
        return { url, key, expires_in: expiresIn, attachment_id: attachmentId }
      }),
    download: (principal, key) => Effect.flatMap(ownedOr404(principal, key), downloadUrl),
    downloadById: (principal, attachmentId) => Effect.flatMap(keyOfId(principal, attachmentId), downloadUrl),
    delete: (principal, key) =>
      ownedOr404(principal, key).pipe(Effect.flatMap(deleteKey), Effect.as({ deleted: true, key })),
    deleteById: (principal, attachmentId) =>
      Effect.gen(function* () {
        const key = yield* keyOfId(principal, attachmentId)
        // The index goes with the file, or when the file is already gone, so no dangling id lingers;
        // after a store failure it stays, so the id can be deleted again.
        const removeIndex = Effect.ignore(store.delete(indexKey(principal.orgId, attachmentId)))
        yield* deleteKey(key).pipe(
          Effect.catchTag("NotFound", (gone: NotFound) => Effect.andThen(removeIndex, Effect.fail(gone)))
        )
        yield* removeIndex
        return { deleted: true, attachment_id: attachmentId }
      })
  })
})

export const layer = (config: Config = {}): Layer.Layer<Attachments, never, ObjectStore> =>
  Layer.effect(Attachments, make(config))
