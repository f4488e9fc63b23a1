// Attachment operations of the API: presigned uploads, download URLs and deletion, by storage key
// or by `att_` id, each confined to the caller's own `attachments/{orgId}/` prefix.
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as AttachmentKey from "./internal/attachmentKey.js"
import { sanitizeFilename } from "./internal/filename.js"
import { defaultMaxUploadBytes } from "./internal/options.js"
import { isOwnKey, orgIdRefusal } from "./internal/tenancy.js"
import type { Forbidden } from "./MailroomError.js"
import { NotFound, ValidationError } from "./MailroomError.js"
import { ObjectStore, type ObjectStoreError } from "./ObjectStore.js"
import type { Principal } from "./Organizations.js"
import * as Wire from "./Wire.js"

/** The limits presigns keep, and the secret attachment ids are signed with. */
export interface Config {
  /** Largest upload a presigned URL is issued for when `content_length` is declared. Default 25 MiB. */
  readonly maxUploadBytes?: number
  /**
   * Refuse a presign without `content_length` (400), so every upload URL binds the exact size: what a
   * store that cannot bound an undeclared upload needs (S3's presigned PUT; GCS without its
   * `maxUploadBytes`). Default false: the API lets clients leave the size out, and such an upload is
   * bounded only where the store can, and when it is sent (the provider's message size).
   */
  readonly requireContentLength?: boolean
  /** Lifetime of upload and download URLs in seconds. Default 3600, as the spec says. */
  readonly expiresIn?: number
  /**
   * Key of the tag in every `attachment_id`. Ids carry their storage key (no index is written), and
   * the tag binds them to their organisation either way; with a secret shared by every instance,
   * only this service can make one. Without it, anyone who knows a key can compute its id, which
   * reaches nothing the key itself does not.
   */
  readonly idSecret?: string | Redacted.Redacted<string>
}

/** The attachment operations of both API variants, on the `ObjectStore` in context. */
export interface Attachments {
  /** The largest `content_length` a presign accepts: the API's document states it. */
  readonly maxUploadBytes: number
  /** Whether a presign must declare `content_length` (`Config.requireContentLength`): the API's document states it. */
  readonly requiresContentLength: boolean
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

const notFound = (what: string) => new NotFound({ message: `attachment not found: ${what}` })

/** Tags ids when no `idSecret` is configured: they stay bound to their organisation, but are not secret. */
const publicIdSecret = "public"

/** The service on the `ObjectStore` in context. */
export const make = Effect.fnUntraced(function* (config: Config = {}) {
  const store = yield* ObjectStore
  const maxUploadBytes = config.maxUploadBytes ?? defaultMaxUploadBytes
  const requiresContentLength = config.requireContentLength ?? false
  const expiresIn = config.expiresIn ?? 3600
  const decodePresign = Wire.decode(Wire.PresignRequest)
  const idKey = AttachmentKey.idKey(
    config.idSecret === undefined
      ? publicIdSecret
      : Redacted.isRedacted(config.idSecret)
        ? Redacted.value(config.idSecret)
        : config.idSecret
  )

  /** Why a decoded presign is refused, if it is: another organisation, or a size out of bounds. */
  const refusal = (principal: Principal, input: Wire.PresignRequest): Forbidden | ValidationError | undefined => {
    const foreign = orgIdRefusal(principal, input.org_id)
    if (foreign !== undefined) return foreign
    if (requiresContentLength && input.content_length === undefined) {
      return new ValidationError({
        errors: ["content_length: is required: upload URLs are issued for a declared size only"]
      })
    }
    if (input.content_length !== undefined && input.content_length > maxUploadBytes) {
      return new ValidationError({ errors: [`content_length: must be at most ${maxUploadBytes} bytes`] })
    }
    return undefined
  }

  const ownedOr404 = (principal: Principal, key: string): Effect.Effect<string, NotFound> =>
    isOwnKey(principal, key) ? Effect.succeed(key) : Effect.fail(notFound(key))

  /** Ids of earlier versions were random, and found through an index object presign wrote. */
  const keyOfLegacyId = (principal: Principal, attachmentId: string) =>
    Effect.gen(function* () {
      const bytes = yield* store
        .get(AttachmentKey.legacyIndexKey(principal.orgId, attachmentId))
        .pipe(Effect.catchTag("ObjectNotFound", () => Effect.fail(notFound(attachmentId))))
      let key: unknown
      try {
        key = (JSON.parse(new TextDecoder().decode(bytes)) as { key?: unknown }).key
      } catch {
        key = undefined
      }
      if (typeof key !== "string" || !isOwnKey(principal, key)) return yield* notFound(attachmentId)
      return key
    })

  const keyOfId = (principal: Principal, attachmentId: string): Effect.Effect<string, NotFound | ObjectStoreError> => {
    if (AttachmentKey.isLegacyId(attachmentId)) return keyOfLegacyId(principal, attachmentId)
    const key = AttachmentKey.keyOfId(idKey, principal.orgId, attachmentId)
    return key === undefined ? Effect.fail(notFound(attachmentId)) : Effect.succeed(key)
  }

  const downloadUrl = (key: string, asked = key) =>
    Effect.gen(function* () {
      yield* store.head(key).pipe(Effect.catchTag("ObjectNotFound", () => Effect.fail(notFound(asked))))
      const url = yield* store.presignGet({ key, expiresIn, filename: AttachmentKey.filenameOf(key) })
      return { download_url: url, expires_in: expiresIn }
    })

  const deleteKey = (key: string, asked = key) =>
    store.delete(key).pipe(Effect.catchTag("ObjectNotFound", () => Effect.fail(notFound(asked))))

  return Attachments.of({
    maxUploadBytes,
    requiresContentLength,
    // A flat chain rather than a generator: a presign is mostly one signature, and each step of the
    // fiber around it costs about as much as the work it does (issue 33).
    presign: (principal, request) =>
      Effect.flatMap(
        decodePresign(request),
        (input): Effect.Effect<Wire.PresignResponse, ValidationError | Forbidden | ObjectStoreError> => {
          const refused = refusal(principal, input)
          if (refused !== undefined) return Effect.fail(refused)
          const contentLength = input.content_length
          return Effect.flatMap(Clock.currentTimeMillis, (now) => {
            const { key, id } = AttachmentKey.issue(idKey, principal.orgId, now, sanitizeFilename(input.filename))
            const put = store.presignPut({
              key,
              contentType: input.content_type ?? "application/octet-stream",
              expiresIn,
              ...(contentLength === undefined ? {} : { contentLength })
            })
            // Nothing is written: the id is the key, so an abandoned upload leaves nothing behind.
            return Effect.map(put, (url) => ({ url, key, expires_in: expiresIn, attachment_id: id }))
          })
        }
      ),
    download: (principal, key) => Effect.flatMap(ownedOr404(principal, key), (owned) => downloadUrl(owned)),
    downloadById: (principal, attachmentId) =>
      Effect.flatMap(keyOfId(principal, attachmentId), (key) => downloadUrl(key, attachmentId)),
    delete: (principal, key) =>
      ownedOr404(principal, key).pipe(
        Effect.flatMap((owned) => deleteKey(owned)),
        Effect.as({ deleted: true, key })
      ),
    deleteById: (principal, attachmentId) =>
      Effect.gen(function* () {
        const key = yield* keyOfId(principal, attachmentId)
        if (!AttachmentKey.isLegacyId(attachmentId)) {
          yield* deleteKey(key, attachmentId)
          return { deleted: true, attachment_id: attachmentId }
        }
        // An earlier version's index goes with its file, or when the file is already gone, so no
        // dangling id lingers; after a store failure it stays, so the id can be deleted again.
        const removeIndex = Effect.ignore(store.delete(AttachmentKey.legacyIndexKey(principal.orgId, attachmentId)))
        yield* deleteKey(key, attachmentId).pipe(
          Effect.catchTag("NotFound", (gone: NotFound) => Effect.andThen(removeIndex, Effect.fail(gone)))
        )
        yield* removeIndex
        return { deleted: true, attachment_id: attachmentId }
      })
  })
})

/** Provides `Attachments` on the `ObjectStore` in context. */
export const layer = (config: Config = {}): Layer.Layer<Attachments, never, ObjectStore> =>
  Layer.effect(Attachments, make(config))
