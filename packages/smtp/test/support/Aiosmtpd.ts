// The independent SMTP peer: Python's aiosmtpd from Debian (`python3-aiosmtpd`), which shares no code
// with nodemailer, in its own process, writing each message it takes into a Maildir read back here.
import { readdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { freePort, spawnPeer, tempDir } from "@mailroom/test-support"
import { Context, Effect, Layer } from "effect"
import { parseReceived, type Received } from "./received.js"

export interface Aiosmtpd {
  readonly port: number
  /** Every message in the Maildir, oldest first. */
  readonly received: () => Promise<ReadonlyArray<Received>>
  readonly byMessageId: (messageId: string) => Promise<Received>
  readonly close: () => Promise<void>
}

export interface AiosmtpdOptions {
  /** Advertised as SIZE and enforced (aiosmtpd's `-s`). Default: aiosmtpd's own, 33,554,432. */
  readonly size?: number
  /** Offer STARTTLS with this certificate and key (PEM files). */
  readonly starttls?: { readonly cert: string; readonly key: string }
}

// Debian's interpreter: another python on PATH may lack the module.
const python = "/usr/bin/python3"

/** Python's mailbox writes `\n` line ends and appends X-Peer, X-MailFrom and X-RcptTo (the envelope). */
const readMessage = async (file: string): Promise<Received> => {
  // Maildir keeps `\n` line ends: the bytes as they crossed the wire had CRLF.
  const raw = Buffer.from((await readFile(file)).toString("latin1").replace(/\r?\n/g, "\r\n"), "latin1")
  const header = (name: string) =>
    new RegExp(`^${name}: (.*)$`, "mi").exec(raw.subarray(0, raw.indexOf("\r\n\r\n")).toString("utf8"))?.[1] ?? ""
  return {
    raw,
    mailFrom: header("X-MailFrom"),
    rcptTo: header("X-RcptTo")
      .split(", ")
      .filter((r) => r !== ""),
    secure: false,
    user: undefined
  }
}

export const start = async (options: AiosmtpdOptions = {}): Promise<Aiosmtpd> => {
  const dir = await tempDir("aiosmtpd")
  const maildir = join(dir.path, "Maildir")
  const port = await freePort()
  const peer = await spawnPeer({
    name: "aiosmtpd",
    command: python,
    args: [
      "-m",
      "aiosmtpd",
      "-n",
      "-d",
      "-l",
      `127.0.0.1:${port}`,
      ...(options.size === undefined ? [] : ["-s", String(options.size)]),
      ...(options.starttls === undefined ? [] : ["--tlscert", options.starttls.cert, "--tlskey", options.starttls.key]),
      "-c",
      "aiosmtpd.handlers.Mailbox",
      maildir
    ],
    packages: ["python3-aiosmtpd"],
    ready: /Server is listening on/
  }).catch(async (error: unknown) => {
    await dir.remove()
    throw error
  })
  const received = async () => {
    const files = await readdir(join(maildir, "new")).catch(() => [])
    // Maildir names start with the delivery time in seconds, then a sequence: sorted, oldest first.
    return Promise.all(files.sort().map((file) => readMessage(join(maildir, "new", file))))
  }
  return {
    port,
    received,
    byMessageId: async (messageId) => {
      for (const message of await received()) {
        if ((await parseReceived(message)).messageId === `<${messageId}>`) return message
      }
      throw new Error(`no message with Message-ID <${messageId}> in the Maildir`)
    },
    close: async () => {
      await peer.stop()
      await dir.remove()
    }
  }
}

/** One aiosmtpd for a test file's layer, stopped with it. */
export class AiosmtpdPeer extends Context.Service<AiosmtpdPeer, Aiosmtpd>()("test/Aiosmtpd") {
  static readonly layer = (options: AiosmtpdOptions = {}) =>
    Layer.effect(
      AiosmtpdPeer,
      Effect.acquireRelease(
        Effect.promise(() => start(options)),
        (peer) => Effect.promise(() => peer.close())
      )
    )
}
