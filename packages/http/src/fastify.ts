// The entry point `@mailroom/http/fastify`: apart from the main one, so that only apps on Fastify
// load its types (fastify is an optional peer dependency), and the handler's internals stay private.
export * as MailroomFastify from "./MailroomFastify.js"
