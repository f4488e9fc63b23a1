export * as MailroomHandler from "./MailroomHandler.js"
export * as OpenApi from "./OpenApi.js"
