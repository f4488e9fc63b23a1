// The strict SMTP peer: the `smtp-server` package in-process on 127.0.0.1, recording every message it
// took with its envelope, and scripted to answer any reply code at any stage, stall, or drop the line.
import type { Socket } from "node:net"
import { Context, Effect, Layer } from "effect"
import { SMTPServer, type SMTPServerOptions } from "smtp-server"
import { parseReceived, type Received } from "./received.js"

/** A reply the peer gives instead of its own; `stall` never answers, `drop` closes the connection. */
export type Answer = { readonly code: number; readonly text: string } | "stall" | "drop"

export interface Script {
  /** Instead of the greeting. */
  readonly connect?: Answer
  readonly mailFrom?: Answer
  /** For each recipient: undefined accepts it. */
  readonly rcptTo?: (recipient: string) => Answer | undefined
  /** Once the whole message has arrived (so `stall` and `drop` happen after the final `.`). */
  readonly data?: Answer
}

export interface Peer {
  readonly port: number
  /** Every message that arrived whole and was not refused: accepted, or left unanswered (`stall`, `drop`). */
  readonly received: Array<Received>
  /** How many messages arrived whole, refused ones included. */
  readonly attempts: () => number
  /** How many connections were opened. */
  readonly connections: () => number
  /** The message whose Message-ID is `<messageId>`; throws when none arrived. */
  readonly byMessageId: (messageId: string) => Promise<Received>
  /** Answers from now on as `script` says; `{}` is the ordinary server again. */
  readonly script: (script: Script) => void
  /** Forgets what was received, and the script. */
  readonly reset: () => void
  readonly close: () => Promise<void>
}

export interface PeerOptions {
  /** Implicit TLS with `key` and `cert`. */
  readonly secure?: boolean
  readonly key?: string
  readonly cert?: string
  /** Offer no STARTTLS. Without a `key`, smtp-server would offer it with its own test certificate. */
  readonly hideSTARTTLS?: boolean
  /** Refuse STARTTLS when asked anyway (smtp-server upgrades a hidden STARTTLS when asked). */
  readonly refuseSTARTTLS?: boolean
  /** The logins it accepts; when given, AUTH is required (and only over TLS). */
  readonly users?: Readonly<Record<string, string>>
  /** Advertised as SIZE, and enforced. */
  readonly size?: number
  /** Enhanced status codes are written only where a script's text gives one. */
  readonly hideENHANCEDSTATUSCODES?: boolean
}

const failure = (answer: { readonly code: number; readonly text: string }) =>
  Object.assign(new Error(answer.text), { responseCode: answer.code })

export const start = async (options: PeerOptions = {}): Promise<Peer> => {
  const received: Array<Received> = []
  let script: Script = {}
  let attempts = 0
  let connections = 0
  const sockets = new Map<number, Socket>()
  const drop = (remotePort: number) => sockets.get(remotePort)?.destroy()
  const answer = (
    given: Answer | undefined,
    remotePort: number,
    callback: (error?: Error | null) => void,
    ok: () => void = () => callback()
  ) => {
    if (given === undefined) return ok()
    if (given === "stall") return
    if (given === "drop") return drop(remotePort)
    callback(failure(given))
  }
  const users = options.users
  const settings: SMTPServerOptions = {
    secure: options.secure ?? false,
    ...(options.key === undefined ? {} : { key: options.key, cert: options.cert }),
    hideSTARTTLS: options.hideSTARTTLS ?? false,
    ...(options.refuseSTARTTLS === true ? { disabledCommands: ["STARTTLS"] } : {}),
    hideENHANCEDSTATUSCODES: options.hideENHANCEDSTATUSCODES ?? false,
    ...(options.size === undefined ? {} : { size: options.size }),
    authOptional: users === undefined,
    authMethods: ["PLAIN", "LOGIN"],
    disableReverseLookup: true,
    logger: false,
    onConnect: (session, callback) => answer(script.connect, session.remotePort, callback),
    onAuth: (auth, _session, callback) =>
      users !== undefined && auth.username !== undefined && users[auth.username] === auth.password
        ? callback(null, { user: auth.username })
        : callback(Object.assign(new Error("Invalid username or password"), { responseCode: 535 })),
    onMailFrom: (_address, session, callback) => answer(script.mailFrom, session.remotePort, callback),
    onRcptTo: (address, session, callback) => answer(script.rcptTo?.(address.address), session.remotePort, callback),
    onData: (stream, session, callback) => {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.once("end", () => {
        attempts++
        const raw = Buffer.concat(chunks)
        if (stream.sizeExceeded) return callback(failure({ code: 552, text: "Message exceeds fixed maximum size" }))
        const given = script.data
        const record = () => {
          received.push({
            raw,
            mailFrom: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
            rcptTo: session.envelope.rcptTo.map((r) => r.address),
            secure: session.secure,
            user: typeof session.user === "string" ? session.user : undefined
          })
        }
        if (given === undefined || given === "stall" || given === "drop") record()
        answer(given, session.remotePort, callback)
      })
    }
  }
  const server = new SMTPServer(settings)
  server.server.on("connection", (socket: Socket) => {
    connections++
    const port = socket.remotePort ?? 0
    sockets.set(port, socket)
    socket.once("close", () => sockets.delete(port))
  })
  server.on("error", () => {})
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const address = server.server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    port,
    received,
    attempts: () => attempts,
    connections: () => connections,
    byMessageId: async (messageId) => {
      for (const message of received) {
        if ((await parseReceived(message)).messageId === `<${messageId}>`) return message
      }
      throw new Error(`no message with Message-ID <${messageId}> arrived (${received.length} did)`)
    },
    script: (next) => {
      script = next
    },
    reset: () => {
      received.length = 0
      script = {}
      attempts = 0
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets.values()) socket.destroy()
        server.close(() => resolve())
      })
  }
}

/** One peer for a test file's layer, closed with it. */
export class SmtpPeer extends Context.Service<SmtpPeer, Peer>()("test/SmtpPeer") {
  static readonly layer = (options: PeerOptions = {}) =>
    Layer.effect(
      SmtpPeer,
      Effect.acquireRelease(
        Effect.promise(() => start(options)),
        (peer) => Effect.promise(() => peer.close())
      )
    )
}
