// Amazon SNS's HTTP(S) messages: the envelope, the string it signs, the checks on the URLs it names
// (certificate and subscription: https, an SNS host), and the RSA signature (version 1 SHA1, 2 SHA256).
import { verify, X509Certificate } from "node:crypto"

export type MessageType = "Notification" | "SubscriptionConfirmation" | "UnsubscribeConfirmation"

export interface Envelope {
  readonly Type: MessageType
  readonly MessageId: string
  readonly TopicArn: string
  readonly Message: string
  readonly Subject?: string
  readonly Timestamp: string
  readonly SignatureVersion: "1" | "2"
  readonly Signature: string
  readonly SigningCertURL: string
  readonly SubscribeURL?: string
  readonly Token?: string
}

/** The envelope, or what it lacks or gets wrong. */
export const parse = (value: unknown): { readonly envelope: Envelope } | { readonly problem: string } => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { problem: "not a JSON object" }
  const record = value as Record<string, unknown>
  const type = record.Type
  if (type !== "Notification" && type !== "SubscriptionConfirmation" && type !== "UnsubscribeConfirmation") {
    return { problem: "Type: must be Notification, SubscriptionConfirmation or UnsubscribeConfirmation" }
  }
  const required = ["MessageId", "TopicArn", "Message", "Timestamp", "Signature", "SigningCertURL"]
  if (type !== "Notification") required.push("SubscribeURL", "Token")
  const missing = required.filter((name) => typeof record[name] !== "string")
  if (missing.length > 0) return { problem: `${missing.join(", ")}: missing or not a string` }
  if (record.SignatureVersion !== "1" && record.SignatureVersion !== "2") {
    return { problem: "SignatureVersion: must be 1 or 2" }
  }
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(record.Timestamp as string)) {
    return { problem: "Timestamp: must be an ISO 8601 time in UTC, as SNS writes it" }
  }
  // SNS leaves Subject out when the publisher gave none; a null is the same absence.
  if (record.Subject !== undefined && record.Subject !== null && typeof record.Subject !== "string") {
    return { problem: "Subject: not a string" }
  }
  return { envelope: record as unknown as Envelope }
}

/** The bytes SNS signs: `Name\nValue\n` for each signed field, in the order its documentation gives. */
export const stringToSign = (envelope: Envelope): string => {
  const fields =
    envelope.Type === "Notification"
      ? [
          "Message",
          "MessageId",
          ...(typeof envelope.Subject === "string" ? ["Subject"] : []),
          "Timestamp",
          "TopicArn",
          "Type"
        ]
      : ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"]
  return fields.map((name) => `${name}\n${String(envelope[name as keyof Envelope])}\n`).join("")
}

const snsHost = /^sns\.[a-zA-Z0-9-]{3,}\.amazonaws\.com(\.cn)?$/

/** An https URL on an SNS endpoint (`sns.<region>.amazonaws.com[.cn]`), on the default port, without credentials. */
const onSnsHost = (text: string): URL | undefined => {
  if (!URL.canParse(text)) return undefined
  const url = new URL(text)
  return url.protocol === "https:" &&
    snsHost.test(url.hostname) &&
    url.port === "" &&
    url.username === "" &&
    url.password === ""
    ? url
    : undefined
}

/** The certificate URL, or why it cannot be trusted. */
export const certificateUrl = (envelope: Envelope): URL | string => {
  const url = onSnsHost(envelope.SigningCertURL)
  if (url === undefined) return "SigningCertURL: must be an https URL on sns.<region>.amazonaws.com"
  if (!url.pathname.endsWith(".pem")) return "SigningCertURL: must name a .pem file"
  return url
}

/** The URL that confirms a subscription, or why it must not be fetched. */
export const subscribeUrl = (envelope: Envelope): URL | string => {
  const url = onSnsHost(envelope.SubscribeURL ?? "")
  if (url === undefined) return "SubscribeURL: must be an https URL on sns.<region>.amazonaws.com"
  if (url.searchParams.get("Action") !== "ConfirmSubscription")
    return "SubscribeURL: must be a ConfirmSubscription request"
  if (url.searchParams.get("TopicArn") !== envelope.TopicArn)
    return "SubscribeURL: must confirm the message's own topic"
  return url
}

/** Whether the signature is the certificate's over the string to sign, with the version's hash. */
export const isSignedBy = (envelope: Envelope, certificate: X509Certificate): boolean => {
  const signature = Buffer.from(envelope.Signature, "base64")
  if (signature.byteLength === 0) return false
  try {
    return verify(
      envelope.SignatureVersion === "1" ? "RSA-SHA1" : "RSA-SHA256",
      Buffer.from(stringToSign(envelope), "utf8"),
      certificate.publicKey,
      signature
    )
  } catch {
    return false
  }
}

/** How long after its `Timestamp` a message is accepted: one hour, as AWS's own SDK validators allow. */
export const maxAgeMillis = 60 * 60 * 1000

/**
 * Whether the message was published more than `maxAgeMillis` before `now` (milliseconds since the
 * epoch): its signature covers its `Timestamp`, so a captured message cannot be replayed later.
 */
export const isStale = (envelope: Envelope, now: number): boolean => now - Date.parse(envelope.Timestamp) > maxAgeMillis

/** Whether the certificate is within its validity period at `now`. */
export const isCurrent = (certificate: X509Certificate, now: Date): boolean =>
  new Date(certificate.validFrom) <= now && now <= new Date(certificate.validTo)

export { X509Certificate }
