export * as GcsObjectStore from "./GcsObjectStore.js"
