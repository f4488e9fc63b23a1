// Attachment keys and ids without an index. A key's timestamp segment carries 80 random bits, so no
// two presigns, in any process, issue one key; an `att_` id is the key itself, encoded and tagged.
import { randomFillSync } from "node:crypto"
import { type KeyedSha256, keyedSha256, messageStart } from "./hmac.js"
import { constantTimeEqual } from "./secret.js"

/** 80 bits: two presigns in the same millisecond collide with odds of 2^-80, whatever the instance. */
const randomBytesPerKey = 10
const tagBytes = 12
const version = 1
/** The largest key rest an id can carry: a sanitised file name is at most 200 UTF-8 bytes. */
const maxFilenameBytes = 200
const headerBytes = 1 + 6 + randomBytesPerKey

export const prefixOf = (orgId: string): string => `attachments/${orgId}/`

/**
 * One segment after the organisation's prefix: `{ms}_{20 hex}-{name}` as issued now, or the
 * `{ms}-{name}` of keys issued by earlier versions, so files stored before still resolve.
 */
const restPattern = /^[0-9]{1,15}(?:_[0-9a-f]{20})?-[^/\\]+$/

export const isOwnKey = (orgId: string, key: string): boolean => {
  const prefix = prefixOf(orgId)
  return key.startsWith(prefix) && restPattern.test(key.slice(prefix.length))
}

/** The file name part of an attachment key. */
export const filenameOf = (key: string): string =>
  key.slice(key.lastIndexOf("/") + 1).replace(/^[0-9]+(?:_[0-9a-f]{20})?-/, "")

// One call to the system's CSPRNG per 400 keys: asking it for 10 bytes at a time cost more than the
// rest of a presign together.
const pool = Buffer.alloc(4000)
let poolOffset = pool.byteLength

const takeRandom = (into: Buffer, at: number) => {
  if (poolOffset + randomBytesPerKey > pool.byteLength) {
    randomFillSync(pool)
    poolOffset = 0
  }
  pool.copy(into, at, poolOffset, poolOffset + randomBytesPerKey)
  poolOffset += randomBytesPerKey
}

/** The secret that tags ids, its HMAC pads computed once. */
export const idKey = (secret: string): KeyedSha256 => keyedSha256(Buffer.from(`mailroom attachment id\0${secret}`))

/**
 * The buffer a tag is computed over: the organisation, a zero byte, then `payloadBytes` of payload,
 * written by the caller from the offset answered. The payload is written there and read back as
 * hex, so an id costs one buffer (issue 33).
 */
const tagged = (secret: KeyedSha256, orgId: string, payloadBytes: number) => {
  const orgBytes = Buffer.byteLength(orgId, "utf8")
  const buffer = secret.message(orgBytes + 1 + payloadBytes)
  buffer.write(orgId, messageStart, "utf8")
  buffer[messageStart + orgBytes] = 0
  return { buffer, payloadStart: messageStart + orgBytes + 1 }
}

const tagOf = (secret: KeyedSha256, buffer: Buffer) => secret.digest(buffer).slice(0, 2 * tagBytes)

/**
 * A new key for a sanitised file name (one segment, not empty) and its id: `att_` + hex of version,
 * six bytes of milliseconds, the random bits and the UTF-8 file name, then a tag binding them to the
 * organisation.
 */
export const issue = (
  secret: KeyedSha256,
  orgId: string,
  now: number,
  filename: string
): { readonly key: string; readonly id: string } => {
  const { buffer, payloadStart } = tagged(secret, orgId, headerBytes + Buffer.byteLength(filename, "utf8"))
  buffer[payloadStart] = version
  buffer.writeUIntBE(now, payloadStart + 1, 6)
  takeRandom(buffer, payloadStart + 7)
  buffer.write(filename, payloadStart + headerBytes, "utf8")
  const payload = buffer.toString("hex", payloadStart)
  const random = payload.slice(14, 2 * headerBytes)
  return { key: `${prefixOf(orgId)}${now}_${random}-${filename}`, id: `att_${payload}${tagOf(secret, buffer)}` }
}

/** Shortest and longest ids this version issues, in hex characters after `att_`. */
export const minIdHex = 2 * (headerBytes + 1 + tagBytes)
export const maxIdHex = 2 * (headerBytes + maxFilenameBytes + tagBytes)

/** The key an id stands for, when its tag proves it was issued for this organisation. */
export const keyOfId = (secret: KeyedSha256, orgId: string, attachmentId: string): string | undefined => {
  const hex = attachmentId.slice(4)
  if (!attachmentId.startsWith("att_") || hex.length < minIdHex || hex.length > maxIdHex || hex.length % 2 !== 0) {
    return undefined
  }
  if (!/^[0-9a-f]+$/.test(hex)) return undefined
  const payloadHex = hex.slice(0, hex.length - 2 * tagBytes)
  const { buffer, payloadStart } = tagged(secret, orgId, payloadHex.length / 2)
  buffer.write(payloadHex, payloadStart, "hex")
  const payload = buffer.subarray(payloadStart)
  const tag = Buffer.from(hex.slice(payloadHex.length), "hex")
  const expected = Buffer.from(tagOf(secret, buffer), "hex")
  if (payload.readUInt8(0) !== version || !constantTimeEqual(tag, expected)) return undefined
  let filename: string
  try {
    filename = new TextDecoder("utf-8", { fatal: true }).decode(payload.subarray(headerBytes))
  } catch {
    return undefined
  }
  const key = `${prefixOf(orgId)}${payload.readUIntBE(1, 6)}_${payload.subarray(7, headerBytes).toString("hex")}-${filename}`
  return isOwnKey(orgId, key) ? key : undefined
}

/** Ids of earlier versions: 32 hex characters, resolved through an index object in the store. */
export const isLegacyId = (attachmentId: string): boolean => /^att_[0-9a-f]{32}$/.test(attachmentId)
export const legacyIndexKey = (orgId: string, attachmentId: string): string =>
  `${prefixOf(orgId)}.ids/${attachmentId}.json`
