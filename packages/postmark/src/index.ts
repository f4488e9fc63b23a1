export * as PostmarkEmailProvider from "./PostmarkEmailProvider.js"
export * as PostmarkEventSource from "./PostmarkEventSource.js"
