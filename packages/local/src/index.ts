export * as DiskObjectStore from "./DiskObjectStore.js"
export * as OutboxEmailProvider from "./OutboxEmailProvider.js"
