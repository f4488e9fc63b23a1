// One organisation never reaches another's files over HTTP: an attachment id is bound to the organisation
// it was issued to, and a key is one segment after the caller's own prefix, whatever the store holds.
import { Effect } from "effect"
import { afterAll, assert, beforeAll, beforeEach, describe, it } from "vitest"
import { keys, makeWorld, message, type Running, transports, type World } from "./world.js"

for (const [transport, start] of Object.entries(transports)) {
  describe(transport, () => {
    let world: World
    let server: Running
    beforeAll(async () => {
      world = makeWorld()
      server = await start(world)
    })
    afterAll(() => server.close())
    beforeEach(() => {
      world.control.asked.length = 0
    })

    const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      return { status: response.status, body: (await response.json()) as unknown }
    }
    const apiKey = (key = keys.acme) => ({ "x-api-key": key })
    const bearer = (token = keys.acmeToken) => ({ authorization: `Bearer ${token}` })

    /** Presigns as `headers` on `path`, and uploads through the URL it got. */
    const uploaded = async (headers: Record<string, string>, path: string) => {
      const presigned = await call("POST", path, headers, { filename: "contract.pdf" })
      assert.strictEqual(presigned.status, 201)
      const body = presigned.body as { url: string; key: string; attachment_id: string }
      const put = await world.memory.fetch(body.url, {
        method: "PUT",
        headers: { "content-type": "application/octet-stream" },
        body: "globex's contract"
      })
      assert.strictEqual(put.status, 200)
      return body
    }

    it("an attachment_id of another organisation is a 404 on download and delete, and the store is never asked", async () => {
      const theirs = await uploaded(bearer(keys.globexToken), "/v1/attachments/presign")
      world.control.asked.length = 0
      const notFound = { status: 404, body: { message: `attachment not found: ${theirs.attachment_id}` } }
      const query = `attachment_id=${theirs.attachment_id}`
      assert.deepStrictEqual(await call("GET", `/v1/attachments/download?${query}`, bearer()), notFound)
      assert.deepStrictEqual(
        await call("DELETE", "/v1/attachments", bearer(), { attachment_id: theirs.attachment_id }),
        notFound
      )
      assert.deepStrictEqual(
        world.control.asked,
        [],
        "an id issued to another organisation must be refused by its tag, before any store access"
      )
      const owner = await call("GET", `/v1/attachments/download?${query}`, bearer(keys.globexToken))
      assert.strictEqual(owner.status, 200, "its own organisation still reaches it")
    })

    it("a key with a path after the caller's prefix is a 404 on download and delete and a 400 in a send", async () => {
      const theirs = await uploaded(apiKey(keys.globex), "/attachments/presign")
      const theirRest = theirs.key.slice("attachments/org_globex/".length)
      const timestamp = "1767225600000_0123456789abcdef0123"
      const paths = [
        `attachments/org_acme/1-x/../../org_globex/${theirRest}`,
        `attachments/org_acme/${timestamp}-x/../../org_globex/${theirRest}`,
        `attachments/org_acme/${timestamp}-x\\..\\..\\org_globex\\${theirRest}`,
        `attachments/org_acme/${timestamp}-a/b.pdf`,
        `attachments/org_acme/${timestamp}-a\\b.pdf`,
        "attachments/org_acme/1767225600000-a/b.pdf",
        "attachments/org_acme/1767225600000-a\\b.pdf"
      ]
      // S3 and GCS keys are plain strings: a store may well hold an object under each of these exact keys.
      for (const key of paths) {
        await Effect.runPromise(world.memory.put(key, new TextEncoder().encode("not acme's"), "application/pdf"))
      }
      const sent = world.provider.sent.length
      world.control.asked.length = 0
      for (const key of paths) {
        const query = `key=${encodeURIComponent(key)}`
        const notFound = { status: 404, body: { message: `attachment not found: ${key}` } }
        const rule = `${key}: a key with "/" or "\\" after the caller's attachments/{org}/ prefix and timestamp`
        assert.deepStrictEqual(
          await call("GET", `/attachments/download?${query}`, apiKey()),
          notFound,
          `${rule} must be a 404 on download`
        )
        assert.deepStrictEqual(
          await call("DELETE", `/attachments/delete?${query}`, apiKey()),
          notFound,
          `${rule} must be a 404 on delete`
        )
        assert.deepStrictEqual(
          await call("POST", "/emails", apiKey(), { ...message, attachments: [{ filename: "b.pdf", key }] }),
          {
            status: 400,
            body: {
              errors: [
                "attachments[0].key: is not a key POST /attachments/presign issues (attachments/{organization}/{time}_{id}-{file name})"
              ]
            }
          },
          `${rule} must be a 400 in a send`
        )
      }
      assert.deepStrictEqual(world.control.asked, [], "no such key may reach the store")
      assert.strictEqual(world.provider.sent.length, sent, "nothing was sent")
      assert.includeMembers(world.memory.keys() as Array<string>, [...paths, theirs.key], "nothing was deleted")
    })
  })
}
