// UUIDv7 (RFC 9562) message ids: unique like v4, and time-ordered, so the outbox lists messages in
// the order they were sent.
import { randomBytes, randomInt } from "node:crypto"

let lastMillis = -1
let counter = 0

export const v7 = (): string => {
  let millis = Date.now()
  // Within one millisecond a 12-bit counter keeps ids increasing (RFC 9562, section 6.2, method 1).
  if (millis > lastMillis) {
    lastMillis = millis
    counter = randomInt(0, 0x800)
  } else {
    counter++
    if (counter > 0xfff) {
      lastMillis++
      counter = 0
    }
    millis = lastMillis
  }
  const bytes = randomBytes(16)
  bytes.writeUIntBE(millis, 0, 6)
  bytes[6] = 0x70 | (counter >> 8)
  bytes[7] = counter & 0xff
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
  const hex = bytes.toString("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
