// Opaque cursors of the keyset lists (`GET /emails`, `GET /suppressions`): the sort key of a page's
// last row, so the next page starts after it whatever was added meanwhile, in constant time.
import * as Effect from "effect/Effect"
import { ValidationError } from "../MailroomError.js"

/** The cursor after a row whose sort key is `key`. */
export const encode = (key: ReadonlyArray<string>): string => Buffer.from(JSON.stringify(key)).toString("base64url")

const refused = new ValidationError({ errors: ["cursor: is not a cursor this API answered"] })

const parse = (cursor: string, length: number): ReadonlyArray<string> | undefined => {
  if (!/^[A-Za-z0-9_-]{1,2048}$/.test(cursor)) return undefined
  try {
    const key: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    // Every key this API writes is printable: a control character (a NUL, which PostgreSQL refuses in
    // text) marks a crafted cursor, refused here rather than failing the query as an outage.
    return Array.isArray(key) &&
      key.length === length &&
      key.every((part) => typeof part === "string" && !/[\u0000-\u001f\u007f]/.test(part))
      ? (key as ReadonlyArray<string>)
      : undefined
  } catch {
    return undefined
  }
}

/**
 * The sort key a cursor names (undefined for no cursor: the first page), or a `ValidationError`
 * naming `cursor` when no list answered it.
 */
export const decode = (
  cursor: string | undefined,
  length: number
): Effect.Effect<ReadonlyArray<string> | undefined, ValidationError> => {
  if (cursor === undefined) return Effect.succeed(undefined)
  const key = parse(cursor, length)
  return key === undefined ? Effect.fail(refused) : Effect.succeed(key)
}
