export * as SesEmailProvider from "./SesEmailProvider.js"
