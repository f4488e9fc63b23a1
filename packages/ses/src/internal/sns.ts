// Amazon SNS's HTTP(S) messages: the envelope, the string it signs, the checks on the URLs it names
// (certificate and subscription: https, an SNS host), and the RSA signature (version 1 SHA1, 2 SHA256).
import { verify, X509Certificate } from "node:crypto"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

const types = ["Notification", "SubscriptionConfirmation", "UnsubscribeConfirmation"] as const

export type MessageType = (typeof types)[number]

const missing = "missing or not a string"

/** A field SNS always sends as a string: absent or of another type, it is named in one problem. */
const text = Schema.String.annotate({ message: missing }).pipe(Schema.annotateKey({ messageMissingKey: missing }))

const common = {
  MessageId: text,
  TopicArn: text,
  Message: text,
  // Before Timestamp: of several problems, the first named is the one reported.
  SignatureVersion: Schema.Literals(["1", "2"])
    .annotate({ message: "must be 1 or 2" })
    .pipe(Schema.annotateKey({ messageMissingKey: "must be 1 or 2" })),
  Timestamp: text.pipe(
    Schema.check(
      Schema.isPattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/, {
        message: "must be an ISO 8601 time in UTC, as SNS writes it"
      })
    )
  ),
  Signature: text,
  SigningCertURL: text,
  // SNS leaves Subject out when the publisher gave none; a null is the same absence.
  Subject: Schema.optionalKey(Schema.NullOr(Schema.String).annotate({ message: "not a string" }))
}

/** A notification: what an SNS topic publishes. */
const Notification = Schema.Struct({ Type: Schema.Literal("Notification"), ...common })

/** A subscription's confirmation or its end, each with the URL that confirms it. */
const Confirmation = Schema.Struct({
  Type: Schema.Literals(["SubscriptionConfirmation", "UnsubscribeConfirmation"]),
  ...common,
  SubscribeURL: text,
  Token: text
})

/** A subscription's confirmation (or its end) as decoded. */
export type ConfirmationEnvelope = typeof Confirmation.Type

/** An SNS message as SNS sends it over HTTP(S); other fields (UnsubscribeURL, attributes) are let be. */
export type Envelope = typeof Notification.Type | ConfirmationEnvelope

const typeMessage = "must be Notification, SubscriptionConfirmation or UnsubscribeConfirmation"
const messageType = Schema.Struct({
  Type: Schema.Literals(types)
    .annotate({ message: typeMessage })
    .pipe(Schema.annotateKey({ messageMissingKey: typeMessage }))
})
const decodeType = Schema.decodeUnknownExit(messageType)
const decodeNotification = Schema.decodeUnknownExit(Notification, { errors: "all" })
const decodeConfirmation = Schema.decodeUnknownExit(Confirmation, { errors: "all" })
const issues = SchemaIssue.makeFormatterStandardSchemaV1()

/** One problem from the schema's issues: every field missing or not a string at once, else the first other. */
const problemOf = (cause: Cause.Cause<Schema.SchemaError>): string => {
  const error = Cause.findErrorOption(cause)
  if (error._tag === "None") return "not an SNS message"
  const found = issues(error.value.issue).issues.map(({ path, message }) => ({
    field: String(path?.[0] ?? ""),
    message
  }))
  const absent = found.filter((issue) => issue.message === missing).map((issue) => issue.field)
  if (absent.length > 0) return `${absent.join(", ")}: ${missing}`
  const first = found[0]
  return first === undefined ? "not an SNS message" : `${first.field}: ${first.message}`
}

/** The envelope, or what it lacks or gets wrong. */
export const parse = (value: unknown): { readonly envelope: Envelope } | { readonly problem: string } => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { problem: "not a JSON object" }
  const type = decodeType(value)
  if (Exit.isFailure(type)) return { problem: problemOf(type.cause) }
  const decoded: Exit.Exit<Envelope, Schema.SchemaError> =
    type.value.Type === "Notification" ? decodeNotification(value) : decodeConfirmation(value)
  return Exit.isSuccess(decoded) ? { envelope: decoded.value } : { problem: problemOf(decoded.cause) }
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
export const subscribeUrl = (envelope: ConfirmationEnvelope): URL | string => {
  const url = onSnsHost(envelope.SubscribeURL)
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
