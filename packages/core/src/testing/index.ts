export * from "./EmailProviderSuite.js"
export * from "./EventSourceProbe.js"
export * from "./ObjectStoreSuite.js"
export * from "./WebhookReceiver.js"
