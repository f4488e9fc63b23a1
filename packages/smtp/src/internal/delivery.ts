// One message handed to a nodemailer transporter, watched for the one fact a failure without a reply
// needs: whether the whole message, and so the final `.` of DATA, had gone to the server.
import type { Transporter } from "nodemailer"
import type { SentMessageInfo } from "nodemailer/lib/smtp-transport"

export interface Progress {
  /** Set once the transport has read the last byte of the message, right before it writes the final `.`. */
  dataSent: boolean
}

// Keyed by the message's bytes, which nodemailer hands to its plugins as given (`mail.data.raw`).
const watched = new WeakMap<Buffer, Progress>()
const instrumented = new WeakSet<object>()

/**
 * Registers, once per transporter, the plugin that watches each message: the stream it adds last is
 * what the SMTP connection pipes after DATA, so its end is the end of the message on the wire.
 */
export const instrument = (transport: Transporter<SentMessageInfo>): void => {
  if (instrumented.has(transport)) return
  instrumented.add(transport)
  transport.use("stream", (mail, done) => {
    const raw = mail.data.raw
    const progress = Buffer.isBuffer(raw) ? watched.get(raw) : undefined
    if (progress !== undefined) {
      mail.message.processFunc((input) => {
        input.once("end", () => {
          progress.dataSent = true
        })
        return input
      })
    }
    done()
  })
}

export interface Message {
  readonly raw: Buffer
  readonly envelope: { readonly from: string; readonly to: Array<string>; readonly size: number }
}

/** Sends `message`; `progress` says how far it got when the returned promise rejects. */
export const send = (
  transport: Transporter<SentMessageInfo>,
  message: Message,
  signal: AbortSignal
): { readonly result: Promise<SentMessageInfo>; readonly progress: Progress } => {
  const progress: Progress = { dataSent: false }
  watched.set(message.raw, progress)
  // `size` goes out as MAIL FROM's SIZE= and lets nodemailer refuse, before MAIL FROM, a message over
  // the SIZE the server advertised in EHLO.
  const result = transport.sendMail({ envelope: { ...message.envelope }, raw: message.raw, signal })
  return { result, progress }
}
