// mailroom's API in a Fastify app, as a plugin under /mail. Fastify parses JSON bodies itself, so the
// plugin's scope takes every content type unparsed and hands the raw request to mailroom's Node handler.
import { EmailProvider, Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { MailroomHandler } from "@mailroom/http"
import Fastify, { type FastifyPluginAsync } from "fastify"

const mailroom = MailroomHandler.fromLayer(
  Mailroom.layer({
    provider: EmailProvider.layerMemory(),
    store: ObjectStore.layerMemory(),
    organizations: Organizations.single({ domains: ["app.example"], apiKeys: ["mr_test_app"] })
  }),
  { basePath: "/mail", v1BasePath: "/mail" }
)

const mailroomPlugin: FastifyPluginAsync = async (scope) => {
  // Only in this plugin's scope: the body stays in the stream, where mailroom reads it with its own
  // size limit and error shapes. The app's routes elsewhere keep Fastify's JSON parser.
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser("*", (_request, _payload, done) => done(null))
  scope.all("/*", async (request, reply) => {
    reply.hijack() // mailroom writes the answer on the raw response
    await mailroom.node(request.raw, reply.raw)
  })
  scope.addHook("onClose", () => mailroom.dispose())
}

export const app = Fastify()
app.get("/health", async () => ({ ok: true }))
app.post("/echo", async (request) => ({ received: request.body }))
app.register(mailroomPlugin, { prefix: "/mail" })
export const ready = mailroom.ready

if (import.meta.main) {
  await ready
  await app.listen({ port: 3000, host: "127.0.0.1" })
  console.log("mailroom on http://127.0.0.1:3000/mail")
}
