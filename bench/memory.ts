// Memory of large sends (issue 33): the built server on the local store, 10 sends at once each with
// the same 7 MB stored attachment, through the outbox and through SES. Only the server's process is
// measured: the emulator (aws-ses-v2-local), which parses each request, runs in the bench's process.
// Peak RSS (VmHWM, reset once the server is idle) over its idle RSS, divided by the attachment bytes
// in flight (10 x 7 MB): targets ≤ 2.5x through the outbox, ≤ 2x through SES.
import { writeFile } from "node:fs/promises"
import type { AddressInfo } from "node:net"
import emulatorModule from "aws-ses-v2-local"
import { verdict } from "./compare.ts"
import { embedded, type Running, startServer } from "./servers.ts"

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

const measure = async (server: Running, name: string, target: number) => {
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
  const ratio = (peak - idle) / (concurrent * attachmentBytes)
  return {
    name,
    "idle RSS MiB": Math.round(idle / 2 ** 20),
    "peak RSS MiB": Math.round(peak / 2 ** 20),
    "(peak - idle) / attachment bytes": `${ratio.toFixed(2)}x`,
    target: `≤ ${target}x: ${verdict(ratio <= target)}`
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
  return rows
}
