// The error classes are exported by name, as callers catch and test them by name.
export { EmailNotReceivedError } from "./EmailNotReceivedError.js"
export {
  type ApiErrorDetails,
  AuthenticationError,
  ConflictError,
  ForbiddenError,
  InternalServerError,
  MailroomApiError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitError,
  ServiceUnavailableError,
  UnprocessableError,
  ValidationError
} from "./MailroomApiError.js"
export * as MailroomClient from "./MailroomClient.js"
export * from "./MailroomConnectionError.js"
