export * as PostmarkEmailProvider from "./PostmarkEmailProvider.js"
