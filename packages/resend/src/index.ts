export * as ResendEmailProvider from "./ResendEmailProvider.js"
export * as ResendEventSource from "./ResendEventSource.js"
