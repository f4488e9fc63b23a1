// A variable missing from the environment stops start-up, naming it, before the server listens:
// not a 500 on every request later. Its own file, as Effect reads process.env once per process.
import { assert, it } from "vitest"

it("without MAILROOM_BUCKET, start-up fails naming it and nothing listens", async () => {
  process.env.AWS_REGION = "eu-west-1"
  delete process.env.MAILROOM_BUCKET
  const { start } = await import("../server.js")
  const { server, mailroom, listening } = start(0)
  const error = await listening.then(
    () => assert.fail("the server started without MAILROOM_BUCKET"),
    (e: unknown) => e as Error
  )
  assert.match(error.message, /^mailroom could not start: .*MAILROOM_BUCKET/s)
  assert.isFalse(server.listening)
  await mailroom.dispose()
})
