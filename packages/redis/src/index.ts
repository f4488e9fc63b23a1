export * as RedisIdempotencyStore from "./RedisIdempotencyStore.js"
