// A stand-in for SES v2 with a sending rate: GetAccount answers `maxSendRate`, and SendEmail accepts
// at most `acceptPerSecond` recipients in each wall-clock second, answering the rest 429
// TooManyRequestsException as SES does. It records every SendEmail it sees, accepted or not.
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface SeenSend {
  /** Milliseconds since the epoch, when the request arrived. */
  readonly at: number
  readonly recipients: number
  readonly subject: string
  readonly accepted: boolean
}

export interface SesStandIn {
  readonly url: string
  readonly seen: Array<SeenSend>
  readonly accountReads: () => number
  /** Recipients seen (accepted or refused) in each wall-clock second that saw any. */
  readonly perSecond: () => ReadonlyMap<number, number>
  readonly close: () => Promise<void>
}

const sesError = (res: ServerResponse, status: number, type: string, message: string) => {
  res.writeHead(status, {
    "content-type": "application/json",
    "x-amzn-requestid": randomUUID(),
    "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazonaws.sesv2/`
  })
  res.end(JSON.stringify({ message }))
}

interface SendEmailBody {
  readonly Destination?: {
    readonly ToAddresses?: ReadonlyArray<string>
    readonly CcAddresses?: ReadonlyArray<string>
    readonly BccAddresses?: ReadonlyArray<string>
  }
  readonly Content?: { readonly Simple?: { readonly Subject?: { readonly Data?: string } } }
}

export const startSesStandIn = async (options: {
  readonly maxSendRate: number
  readonly acceptPerSecond: number
}): Promise<SesStandIn> => {
  const seen: Array<SeenSend> = []
  const acceptedIn = new Map<number, number>()
  let accountReads = 0
  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    if (req.method === "GET" && req.url === "/v2/email/account") {
      accountReads++
      res.writeHead(200, { "content-type": "application/json" })
      res.end(
        JSON.stringify({
          SendQuota: { Max24HourSend: 50000, MaxSendRate: options.maxSendRate, SentLast24Hours: 0 },
          SendingEnabled: true,
          ProductionAccessEnabled: true
        })
      )
      return
    }
    if (req.method === "POST" && req.url === "/v2/email/outbound-emails") {
      const at = Date.now()
      const parsed = JSON.parse(body) as SendEmailBody
      const d = parsed.Destination ?? {}
      const recipients = (d.ToAddresses?.length ?? 0) + (d.CcAddresses?.length ?? 0) + (d.BccAddresses?.length ?? 0)
      const second = Math.floor(at / 1000)
      const accepted = (acceptedIn.get(second) ?? 0) + recipients <= options.acceptPerSecond
      seen.push({ at, recipients, subject: parsed.Content?.Simple?.Subject?.Data ?? "", accepted })
      if (!accepted) return sesError(res, 429, "TooManyRequestsException", "Maximum sending rate exceeded.")
      acceptedIn.set(second, (acceptedIn.get(second) ?? 0) + recipients)
      res.writeHead(200, { "content-type": "application/json", "x-amzn-requestid": randomUUID() })
      res.end(JSON.stringify({ MessageId: `0100018f-${randomUUID()}-000000` }))
      return
    }
    sesError(res, 404, "NotFoundException", `no ${req.method} ${req.url} here`)
  }
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    accountReads: () => accountReads,
    perSecond: () => {
      const counts = new Map<number, number>()
      for (const send of seen) {
        const second = Math.floor(send.at / 1000)
        counts.set(second, (counts.get(second) ?? 0) + send.recipients)
      }
      return counts
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
