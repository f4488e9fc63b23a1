export * as MailroomHandler from "./MailroomHandler.js"
export * as OpenApi from "./OpenApi.js"
export * as StoreRoutes from "./StoreRoutes.js"
