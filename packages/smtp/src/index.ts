export * as SmtpEmailProvider from "./SmtpEmailProvider.js"
