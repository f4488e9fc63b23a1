// The errors of an ObjectStore, in the model of ProviderError: a missing object and an object over a
// read's limit are errors of their own; every other failure is an `ObjectStoreError` whose `reason`
// says what happened and whether trying again can help. Re-exported by ObjectStore.
import * as Data from "effect/Data"
import { guard, ReasonError, reasonOf, TaggedReason } from "./reasonError.js"

/** What `head` answers of an object: its size and content type. */
export interface ObjectInfo {
  readonly size: number
  readonly contentType: string
}

/** Nothing is stored under the key. */
export class ObjectNotFound extends Data.TaggedError("ObjectNotFound")<{
  readonly key: string
  /** The vendor's own answer, when there was one. */
  readonly cause?: unknown
}> {
  readonly isRetryable = false
  override get message(): string {
    return `no object is stored under ${this.key}`
  }
}

/** `read` was given a `maxBytes` the object is over; its bytes were not read. */
export class ObjectTooLarge extends Data.TaggedError("ObjectTooLarge")<{
  readonly key: string
  readonly info: ObjectInfo
  readonly maxBytes: number
}> {
  readonly isRetryable = false
  override get message(): string {
    return `the object under ${this.key} is ${this.info.size} bytes, over the limit of ${this.maxBytes}`
  }
}

/** The store refused the credentials or their policy (a 403, a file the process may not read). */
export class AccessDenied extends TaggedReason("AccessDenied", false)<{
  readonly message: string
}> {}

/** The store could not be reached or failed (a timeout, a 5xx, a full disk): worth trying again. */
export class Unavailable extends TaggedReason("Unavailable", true)<{
  readonly message: string
}> {}

/** Anything the adapter could not classify (a missing bucket, an answer it cannot read). Not retried. */
export class Unknown extends TaggedReason("Unknown", false)<{
  readonly message: string
}> {}

/** Why a store refused or failed. */
export type Reason = AccessDenied | Unavailable | Unknown

/** The store refused or failed; `reason` says how, `cause` keeps the vendor's own error. */
export class ObjectStoreError extends ReasonError("ObjectStoreError")<{
  /** The store that answered: "s3", "gcs", "disk", "memory". */
  readonly store: string
  readonly reason: Reason
  readonly cause?: unknown
}> {}

const reason = reasonOf({ AccessDenied, Unavailable, Unknown })

/** An ObjectStoreError with a reason of `tag`, as stores build their failures (`EventSource.refusal`'s twin). */
export const failure = (store: string, tag: Reason["_tag"], message: string, cause?: unknown): ObjectStoreError =>
  new ObjectStoreError({ store, reason: reason(tag, message), ...(cause === undefined ? {} : { cause }) })

/** True for an ObjectStoreError from any copy of this package (safer than `instanceof` across duplicates). */
export const isObjectStoreError = guard<ObjectStoreError>("ObjectStoreError")
