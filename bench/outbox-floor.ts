// The floor of a durable outbox behind HTTP (issue 33), run as a server of its own by bench/outboxServer.ts:
// node:http, JSON.parse of the body, the message composed by nodemailer's MailComposer, and one `.eml`
// written to a temporary file, fdatasync'd and renamed into place; 201 with its id. Prints its URL.
import { randomUUID } from "node:crypto"
import { mkdirSync } from "node:fs"
import { open, rename } from "node:fs/promises"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import MailComposer from "nodemailer/lib/mail-composer"

const dir = path.resolve("outbox")
mkdirSync(dir, { recursive: true })

interface Request {
  readonly from: string
  readonly from_name?: string
  readonly to: ReadonlyArray<string>
  readonly cc?: ReadonlyArray<string>
  readonly bcc?: ReadonlyArray<string>
  readonly subject: string
  readonly body: { readonly text?: string; readonly html?: string }
}

const write = async (id: string, content: Uint8Array) => {
  const temporary = path.join(dir, `.${id}.eml.tmp`)
  const handle = await open(temporary, "wx")
  try {
    await handle.writeFile(content)
    await handle.datasync()
  } finally {
    await handle.close()
  }
  await rename(temporary, path.join(dir, `${id}.eml`))
}

const server = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", async () => {
    try {
      const request = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Request
      const id = randomUUID()
      const message = await new MailComposer({
        from: request.from_name === undefined ? request.from : { name: request.from_name, address: request.from },
        to: [...request.to],
        cc: [...(request.cc ?? [])],
        bcc: [...(request.bcc ?? [])],
        subject: request.subject,
        messageId: `<${id}@outbox.mailroom>`,
        date: new Date(),
        text: request.body.text ?? "",
        html: request.body.html ?? "",
        headers: [{ key: "X-Mailroom-Organization", value: "org_acme" }]
      })
        .compile()
        .build()
      await write(id, message)
      const answer = JSON.stringify({ message_id: id })
      res.writeHead(201, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) })
      res.end(answer)
    } catch (error) {
      res.writeHead(500)
      res.end(String(error))
    }
  })
})
server.listen(0, "127.0.0.1", () => console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
