// What a peer received, read as a mail client and a receiving server read it: the message parsed by
// mailparser, the blind copies from the envelope, and its DKIM signature checked by mailauth.
import { generateKeyPairSync } from "node:crypto"
import type { ReceivedEmail } from "@mailroom/core/testing"
import { dkimVerify } from "mailauth"
import { type AddressObject, type ParsedMail, simpleParser } from "mailparser"

/** One message as the server took it: the bytes after DATA and the envelope. */
export interface Received {
  readonly raw: Buffer
  readonly mailFrom: string
  readonly rcptTo: ReadonlyArray<string>
  /** Whether it came over TLS (STARTTLS or implicit). */
  readonly secure: boolean
  /** Who logged in, if anyone. */
  readonly user: string | undefined
}

// keepCidLinks: the HTML as sent, `cid:` references included (mailparser would inline them as data: URLs).
export const parseReceived = (received: Received): Promise<ParsedMail> =>
  simpleParser(received.raw, { keepCidLinks: true })

/** Each value of header `name`, unfolded, as written (mailparser restructures List-* and others). */
export const headerValues = (parsed: ParsedMail, name: string): ReadonlyArray<string> =>
  parsed.headerLines
    .filter((h) => h.key === name.toLowerCase())
    .map((h) =>
      h.line
        .slice(h.line.indexOf(":") + 1)
        .replace(/\r?\n[ \t]+/g, " ")
        .trim()
    )

const addresses = (field: AddressObject | Array<AddressObject> | undefined): Array<string> =>
  (field === undefined ? [] : Array.isArray(field) ? field : [field]).flatMap((group) =>
    group.value.flatMap((a) => (a.address === undefined ? [] : [a.address]))
  )

/** The message as core's conformance suite compares it: blind copies are the envelope's other recipients. */
export const toReceivedEmail = async (received: Received): Promise<ReceivedEmail> => {
  const parsed = await parseReceived(received)
  const from = parsed.from?.value[0]
  const to = addresses(parsed.to)
  const cc = addresses(parsed.cc)
  const visible = new Set([...to, ...cc].map((a) => a.toLowerCase()))
  return {
    from: { address: from?.address ?? "", ...(from?.name ? { name: from.name } : {}) },
    to,
    cc,
    bcc: received.rcptTo.filter((r) => !visible.has(r.toLowerCase())),
    replyTo: addresses(parsed.replyTo),
    subject: parsed.subject ?? "",
    text: parsed.text,
    html: parsed.html === false ? undefined : parsed.html,
    attachments: parsed.attachments.map((a) => ({
      filename: a.filename ?? "",
      contentType: a.contentType,
      content: new Uint8Array(a.content),
      contentId: a.cid,
      disposition: a.contentDisposition === "inline" ? ("inline" as const) : ("attachment" as const)
    })),
    headers: parsed.headerLines.map((h) => ({
      name: h.line.slice(0, h.line.indexOf(":")),
      value: h.line
        .slice(h.line.indexOf(":") + 1)
        .replace(/\r?\n[ \t]+/g, " ")
        .trim()
    })),
    rawHeaders: received.raw.toString("latin1").split("\r\n\r\n")[0]
  }
}

export interface DkimTestKey {
  readonly domainName: string
  readonly keySelector: string
  /** PKCS#8 PEM. */
  readonly privateKey: string
  /** The TXT record a resolver answers for `{keySelector}._domainkey.{domainName}`. */
  readonly record: string
}

export const dkimTestKey = (domainName = "acme.example", keySelector = "mr1", bits = 2048): DkimTestKey => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: bits })
  const der = publicKey.export({ type: "spki", format: "der" })
  return {
    domainName,
    keySelector,
    privateKey: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    record: `v=DKIM1; k=rsa; p=${der.toString("base64")}`
  }
}

/** mailauth's verdict on each signature, with a resolver that knows only the test key's record. */
export const verifyDkim = async (raw: Buffer, key: DkimTestKey) => {
  const result = await dkimVerify(raw, {
    strict: true,
    resolver: async (name, type) => {
      if (type === "TXT" && name === `${key.keySelector}._domainkey.${key.domainName}`) return [[key.record]]
      throw Object.assign(new Error(`no ${type} record for ${name}`), { code: "ENOTFOUND" })
    }
  })
  return result.results.map((r) => ({
    result: r.status.result,
    domain: r.signingDomain,
    selector: r.selector,
    headers: (r.signingHeaders?.keys ?? "")
      .toLowerCase()
      .split(":")
      .map((name) => name.trim())
  }))
}
