export * as RedisConnection from "./RedisConnection.js"
export * as RedisIdempotencyStore from "./RedisIdempotencyStore.js"
export * as RedisQueueStore from "./RedisQueueStore.js"
export * as RedisRateLimitStore from "./RedisRateLimitStore.js"
