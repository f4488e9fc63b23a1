export * as DiskIdempotencyStore from "./DiskIdempotencyStore.js"
export * as DiskObjectStore from "./DiskObjectStore.js"
export * as DiskQueueStore from "./DiskQueueStore.js"
export * as OutboxEmailProvider from "./OutboxEmailProvider.js"
