export * as SesEmailProvider from "./SesEmailProvider.js"
export * as SesEventSource from "./SesEventSource.js"
export * as SesSendQuota from "./SesSendQuota.js"
