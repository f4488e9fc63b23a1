// Memory of large sends (issue 33): the built server on the local store, 10 sends at once each with
// the same 7 MB stored attachment, through the outbox and through SES. Only the server's process is
// measured: the emulator (aws-ses-v2-local), which parses each request, runs in the bench's process.
// Peak RSS (VmHWM, reset once the server is idle) over its idle RSS, divided by the attachment bytes
// in flight (10 x 7 MB): targets ≤ 2.5x through the outbox, ≤ 2x through SES. Then, for information,
// the same through Postmark, Resend (the tests' stand-ins) and SMTP (smtp-server), each in the bench's
// process, beside what the provider declares it holds per attachment byte (`heldPerAttachmentByte`).
import { writeFile } from "node:fs/promises"
import type { AddressInfo } from "node:net"
import type { EmailProvider } from "@mailroom/core"
import { PostmarkEmailProvider } from "@mailroom/postmark"
import { ResendEmailProvider } from "@mailroom/resend"
import { SmtpEmailProvider } from "@mailroom/smtp"
import emulatorModule from "aws-ses-v2-local"
import { Effect } from "effect"
import * as PostmarkStandIn from "../packages/postmark/test/PostmarkStandIn.ts"
import * as ResendStandIn from "../packages/resend/test/ResendStandIn.ts"
import { verdict } from "./compare.ts"
import { embedded, type Running, startServer, startSmtpSink } from "./servers.ts"

const startEmulator: typeof emulatorModule.default =
  typeof emulatorModule === "function" ? emulatorModule : emulatorModule.default

const attachmentBytes = 7 * 1000 * 1000
const concurrent = 10

const vm = async (pid: number, field: "VmRSS" | "VmHWM") => {
  const { readFile } = await import("node:fs/promises")
  const status = await readFile(`/proc/${pid}/status`, "utf8")
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1]) * 1024
}

const post = async (url: string, path: string, body: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "mr_bench" },
    body: JSON.stringify(body)
  })
  const answer = (await response.json()) as Record<string, unknown>
  if (response.status >= 300) throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(answer)}`)
  return answer
}

/** Uploads the attachment once through a presigned URL; answers its key. */
const upload = async (url: string) => {
  const presigned = (await post(url, "/attachments/presign", {
    filename: "scan.pdf",
    content_type: "application/pdf",
    content_length: attachmentBytes
  })) as { url: string; key: string }
  const bytes = new Uint8Array(attachmentBytes)
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24
  const put = await fetch(presigned.url, { method: "PUT", headers: { "content-type": "application/pdf" }, body: bytes })
  if (put.status >= 300) throw new Error(`the upload answered ${put.status}`)
  return presigned.key
}

/** Peak RSS over idle of the server's process for `concurrent` sends at once, over the attachment bytes. */
const peakRatio = async (server: Running) => {
  const key = await upload(server.url)
  const send = () =>
    post(server.url, "/emails", {
      from: "billing@acme.example",
      to: ["alice@example.com"],
      subject: "Your scan",
      body: { text: "Attached.", html: "<p>Attached.</p>" },
      attachments: [{ filename: "scan.pdf", key }]
    })
  // Warm: every module a large send needs is loaded, every buffer pool grown once.
  await send()
  await new Promise((resolve) => setTimeout(resolve, 500))
  const pid = server.child.pid ?? 0
  const idle = await vm(pid, "VmRSS")
  // From here VmHWM is the peak since now (Linux: writing 5 to clear_refs resets it).
  await writeFile(`/proc/${pid}/clear_refs`, "5")
  await Promise.all(Array.from({ length: concurrent }, send))
  const peak = await vm(pid, "VmHWM")
  return { idle, peak, ratio: (peak - idle) / (concurrent * attachmentBytes) }
}

const measure = async (server: Running, name: string, target: number) => {
  const { idle, peak, ratio } = await peakRatio(server)
  return {
    name,
    "idle RSS MiB": Math.round(idle / 2 ** 20),
    "peak RSS MiB": Math.round(peak / 2 ** 20),
    "(peak - idle) / attachment bytes": `${ratio.toFixed(2)}x`,
    target: `≤ ${target}x: ${verdict(ratio <= target)}`
  }
}

/** What core counts per attachment byte for a provider that declares nothing: the file and its base64. */
const undeclared = 1 + 4 / 3

/** What `make` with these options declares, so the line shows what core counts for this very provider. */
const declaredBy = <E, R>(provider: Effect.Effect<EmailProvider.EmailProvider, E, R>) =>
  Effect.runPromise(
    Effect.scoped(Effect.map(provider, (p) => p.limits.heldPerAttachmentByte)) as Effect.Effect<number | undefined, E>
  )

/**
 * One provider's line: informational, the measured ratio beside what it declares, `counted` when the
 * declaration covers it (within 0.3). The budget is raised so every send is in flight at once: the
 * line measures what a send holds, not how many sends the budget lets through.
 */
const measureProvider = async (name: string, provider: object, declared: number | undefined) => {
  const server = await startServer({ ...embedded, sending: { attachmentBytesInFlight: 2 ** 30 }, provider })
  try {
    const { idle, peak, ratio } = await peakRatio(server)
    const counted = declared ?? undeclared
    return {
      name: `${concurrent} sends at once, 7 MB attachment each, through ${name}`,
      "idle RSS MiB": Math.round(idle / 2 ** 20),
      "peak RSS MiB": Math.round(peak / 2 ** 20),
      "(peak - idle) / attachment bytes": `${ratio.toFixed(2)}x`,
      declared: declared === undefined ? `nothing (${undeclared.toFixed(2)}x)` : `${declared}x`,
      target: `≤ declared + 0.3: ${ratio <= counted + 0.3 ? "counted" : "undercounted"}`
    }
  } finally {
    await server.stop()
  }
}

const postmark = async () => {
  const standIn = await PostmarkStandIn.start()
  try {
    const options = { serverToken: standIn.token, requestHost: standIn.host, useHttps: false }
    const declared = await declaredBy(PostmarkEmailProvider.make(options))
    return await measureProvider("Postmark (stand-in)", { kind: "postmark", ...options }, declared)
  } finally {
    await standIn.close()
  }
}

const resend = async () => {
  const standIn = await ResendStandIn.start()
  try {
    const options = { apiKey: standIn.apiKey, baseUrl: standIn.url }
    const declared = await declaredBy(ResendEmailProvider.make(options))
    return await measureProvider("Resend (stand-in)", { kind: "resend", ...options }, declared)
  } finally {
    await standIn.close()
  }
}

/** SMTP against smtp-server, outside the measured process. */
const smtp = async () => {
  const sink = await startSmtpSink()
  try {
    const options = { host: "127.0.0.1", port: sink.port }
    const declared = await declaredBy(SmtpEmailProvider.make(options))
    return await measureProvider("SMTP (smtp-server)", { kind: "smtp", ...options }, declared)
  } finally {
    await sink.close()
  }
}

export const run = async (): Promise<ReadonlyArray<object>> => {
  const rows: Array<object> = []
  const outbox = await startServer({ ...embedded, viewer: { enabled: false } })
  try {
    rows.push(await measure(outbox, `${concurrent} sends at once, 7 MB attachment each, through the outbox`, 2.5))
  } finally {
    await outbox.stop()
  }
  const emulator = await startEmulator({ host: "127.0.0.1", port: 0 })
  const ses = await startServer({
    ...embedded,
    provider: {
      kind: "ses",
      region: "us-east-1",
      endpoint: `http://127.0.0.1:${(emulator.address() as AddressInfo).port}`,
      accessKeyId: "AKIDEMULATOR",
      secretAccessKey: "emulator-secret-key"
    }
  })
  try {
    rows.push(await measure(ses, `${concurrent} sends at once, 7 MB attachment each, through SES (emulator)`, 2))
  } finally {
    await ses.stop()
    emulator.closeAllConnections()
    await new Promise<void>((resolve) => emulator.close(() => resolve()))
  }
  rows.push(await postmark(), await resend(), await smtp())
  return rows
}
