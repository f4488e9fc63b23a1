// The error classes are exported by name, as callers catch and test them by name.
export * from "./EmailNotReceivedError.js"
export * from "./MailroomApiError.js"
export * as MailroomClient from "./MailroomClient.js"
export * from "./MailroomConnectionError.js"
