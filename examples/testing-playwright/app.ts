// A tiny web app whose sign-up mails a confirmation link through a mailroom server, and confirms the
// address when the link is followed: what the end-to-end test in e2e/ drives, as a user would.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { MailroomClient } from "@mailroom/client"

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c)

const page = (body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme</title></head><body>${body}</body></html>`

const form = page(`<h1>Create your account</h1>
<form method="post" action="/signup">
<label>Email <input type="email" name="email" required></label>
<button type="submit">Sign up</button>
</form>`)

export interface AppOptions {
  /** The mailroom server the app sends through. */
  readonly mailroomUrl: string
  readonly apiKey: string
  /** Default 0: any free port. */
  readonly port?: number
}

export const startApp = async (options: AppOptions) => {
  const mailroom = MailroomClient.make({ baseUrl: options.mailroomUrl, apiKey: options.apiKey })
  const pending = new Map<string, string>()
  let url = ""
  const server = createServer(async (req, res) => {
    const { pathname, searchParams } = new URL(req.url ?? "/", url)
    const answer = (status: number, body: string) =>
      res.writeHead(status, { "content-type": "text/html; charset=utf-8" }).end(body)
    if (req.method === "GET" && pathname === "/") return answer(200, form)
    if (req.method === "POST" && pathname === "/signup") {
      let body = ""
      for await (const chunk of req) body += chunk
      const email = new URLSearchParams(body).get("email") ?? ""
      const token = crypto.randomUUID()
      pending.set(token, email)
      const link = `${url}/confirm?token=${token}`
      await mailroom.emails.send({
        from: "welcome@app.example",
        to: [email],
        subject: "Confirm your address",
        body: {
          html: `<p>Welcome to Acme! <a href="${link}">Confirm your address</a></p>`,
          text: `Welcome to Acme! Confirm your address: ${link}`
        }
      })
      return answer(200, page(`<h1>Check your inbox</h1><p>We sent a link to ${escapeHtml(email)}.</p>`))
    }
    if (req.method === "GET" && pathname === "/confirm") {
      const email = pending.get(searchParams.get("token") ?? "")
      if (email === undefined) return answer(404, page("<h1>This link is not valid</h1>"))
      pending.delete(searchParams.get("token") ?? "")
      return answer(200, page(`<h1>Your address is confirmed</h1><p>${escapeHtml(email)}</p>`))
    }
    return answer(404, page("<h1>Not found</h1>"))
  })
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

if (import.meta.main) {
  const app = await startApp({
    mailroomUrl: process.env.MAILROOM_URL ?? "http://127.0.0.1:3000",
    apiKey: process.env.MAILROOM_API_KEY ?? "mr_test_acme",
    port: Number(process.env.PORT ?? 4000)
  })
  console.log(`the app is at ${app.url}`)
}
