// Fast path: replaces createHmac("sha256", key) for attachment-id tags and the disk store's URL signatures; held equal by hmac.test.ts ("answers what createHmac answers"); justified by `pnpm bench presign` (Attachments.presign on S3: with the id written into the hashed buffer, AttachmentKey.issue 2.8 -> 1.3 µs).
// HMAC-SHA256 (RFC 2104) as two one-shot `crypto.hash` calls over pads computed once: setting up an
// Hmac object per call cost more than all of its hashing (issue 33).
import { hash } from "node:crypto"

const blockBytes = 64
const digestBytes = 32

/** Where a message starts in a buffer from `KeyedSha256.message`: after the key's inner pad. */
export const messageStart = blockBytes

/** HMAC-SHA256 under one key, of a message written straight into the buffer that is hashed. */
export interface KeyedSha256 {
  /** A buffer for a message of `length` bytes, to be written in full from `messageStart` on. */
  readonly message: (length: number) => Buffer
  /** The HMAC of the message in a buffer from `message`, in hex. */
  readonly digest: (message: Buffer) => string
}

/** HMAC-SHA256 under `key`, its pads computed once: for a signature made on every request. */
export const keyedSha256 = (key: Uint8Array): KeyedSha256 => {
  const block = Buffer.alloc(blockBytes)
  block.set(key.byteLength > blockBytes ? hash("sha256", key, "buffer") : key)
  const innerPad = Buffer.alloc(blockBytes)
  // Reused: the outer message is the pad and the inner digest, the same length every time.
  const outer = Buffer.alloc(blockBytes + digestBytes)
  for (let i = 0; i < blockBytes; i++) {
    innerPad[i] = (block[i] as number) ^ 0x36
    outer[i] = (block[i] as number) ^ 0x5c
  }
  return {
    message: (length) => {
      const buffer = Buffer.allocUnsafe(blockBytes + length)
      innerPad.copy(buffer)
      return buffer
    },
    digest: (message) => {
      outer.write(hash("sha256", message), blockBytes, "hex")
      return hash("sha256", outer)
    }
  }
}
