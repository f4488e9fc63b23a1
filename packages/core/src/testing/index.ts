export * from "./EmailProviderSuite.js"
export * from "./ObjectStoreSuite.js"
