// UUIDv7 (RFC 9562) message ids: unique like v4, and time-ordered, so the outbox lists messages in
// the order they were sent.
import { randomFillSync } from "node:crypto"

let lastMillis = -1
let counter = 0

// Random bits drawn from the system 4 KiB at a time: one call per 400 ids, where a call per id cost
// more than the rest of an id together.
const pool = Buffer.alloc(4096)
let poolOffset = pool.length

const random = (bytes: number) => {
  if (poolOffset + bytes > pool.length) {
    randomFillSync(pool)
    poolOffset = 0
  }
  poolOffset += bytes
  return poolOffset - bytes
}

export const v7 = (): string => {
  let millis = Date.now()
  // Within one millisecond a 12-bit counter keeps ids increasing (RFC 9562, section 6.2, method 1).
  if (millis > lastMillis) {
    lastMillis = millis
    // 11 random bits: the counter starts in the lower half, so it has room to count up.
    counter = pool.readUInt16BE(random(2)) & 0x7ff
  } else {
    counter++
    if (counter > 0xfff) {
      lastMillis++
      counter = 0
    }
    millis = lastMillis
  }
  const bytes = Buffer.allocUnsafe(16)
  const from = random(8)
  pool.copy(bytes, 8, from, from + 8)
  bytes.writeUIntBE(millis, 0, 6)
  bytes[6] = 0x70 | (counter >> 8)
  bytes[7] = counter & 0xff
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
  const hex = bytes.toString("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
