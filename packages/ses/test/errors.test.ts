import { type AddressInfo, createServer as createNetServer, type Server, type Socket } from "node:net"
import {
  AccountSuspendedException,
  BadRequestException,
  LimitExceededException,
  MailFromDomainNotVerifiedException,
  MessageRejected,
  NotFoundException,
  SESv2Client,
  type SESv2ServiceException,
  SendingPausedException,
  TooManyRequestsException
} from "@aws-sdk/client-sesv2"
import { assert, describe, layer } from "@effect/vitest"
import {
  type EmailProvider,
  Mailer,
  Mailroom,
  MessageLog,
  ObjectStore,
  Organizations,
  type ProviderError
} from "@mailroom/core"
import { outboundEmail } from "@mailroom/core/testing"
import { networkFaultCases, refusedPort } from "@mailroom/test-support"
import { Duration, Effect } from "effect"
import { SesEmailProvider } from "../src/index.js"
import { type Answer, accepted, type Recorded, Stub, StubLive, sesError } from "./stub.js"

const keyId = "AKIDSTUBEXAMPLE00001"
const secret = "stub/Secret+Key/0123456789abcdefXYZ"

// Plain strings, as most users give them (the emulator's tests give Redacted values): errors must
// keep them out just the same.
const options = (endpoint: string): SesEmailProvider.Options => ({
  region: "us-east-1",
  endpoint,
  accessKeyId: keyId,
  secretAccessKey: secret
})

const message = (parts: Partial<EmailProvider.OutboundEmail> = {}) =>
  outboundEmail({
    from: { address: "sender@acme.example", name: "Acme" },
    to: ["alice@example.com", "Bob@Example.com"],
    cc: ["carol@example.com"],
    bcc: ["dave@example.com"],
    subject: "Your receipt",
    text: "Thanks.",
    ...parts
  })

/** Sends once through a provider built from options (as users build it) and returns its failure. */
const failure = (answer: Answer | ((request: Recorded) => Answer), email: EmailProvider.OutboundEmail = message()) =>
  Effect.gen(function* () {
    const stub = yield* Stub
    stub.answer = typeof answer === "function" ? answer : () => answer
    const before = stub.requests.length
    const provider = yield* SesEmailProvider.make(options(stub.url))
    const error = yield* Effect.flip(provider.send(email))
    assert.strictEqual(stub.requests.length - before, 1, "exactly one request: the SDK must not retry on its own")
    assert.strictEqual(error.provider, "ses")
    for (const shown of [error.message, String(error), JSON.stringify(error.reason)]) {
      assert.notInclude(shown, secret)
      assert.notInclude(shown, keyId)
    }
    return error
  }).pipe(Effect.scoped)

const statusOf = (cause: unknown) => (cause as SESv2ServiceException).$metadata.httpStatusCode

describe("SES failures, answered in SES v2's wire format and parsed by the real SDK", () => {
  layer(StubLive, { timeout: 30_000, excludeTestServices: true })((it) => {
    it.effect("sends a signed SendEmail with the configuration set, and returns SES's MessageId", () =>
      Effect.gen(function* () {
        const stub = yield* Stub
        stub.answer = () => accepted("0100018f-the-id-000000")
        const provider = yield* SesEmailProvider.make({ ...options(stub.url), configurationSetName: "transactional" })
        const pdf = new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x00, 0xff])
        const { messageId } = yield* provider.send(
          message({
            attachments: [{ filename: "facture été.pdf", contentType: "application/pdf", content: pdf }],
            metadata: { "mailroom-org": "org_acme" }
          })
        )
        assert.strictEqual(messageId, "0100018f-the-id-000000")
        const request = stub.requests.at(-1)
        assert.strictEqual(request?.method, "POST")
        assert.strictEqual(request?.path, "/v2/email/outbound-emails")
        assert.match(
          String(request?.headers.authorization),
          /^AWS4-HMAC-SHA256 Credential=AKIDSTUBEXAMPLE00001\/\d{8}\/us-east-1\/ses\/aws4_request,/
        )
        const body = JSON.parse(request?.body ?? "{}")
        assert.strictEqual(body.ConfigurationSetName, "transactional")
        // SES hands tags back in each event's mail.tags: how an event finds its organisation.
        assert.deepStrictEqual(body.EmailTags, [{ Name: "mailroom-org", Value: "org_acme" }])
        assert.strictEqual(body.FromEmailAddress, '"Acme" <sender@acme.example>')
        assert.deepStrictEqual(body.Destination, {
          ToAddresses: ["alice@example.com", "Bob@Example.com"],
          CcAddresses: ["carol@example.com"],
          BccAddresses: ["dave@example.com"]
        })
        assert.deepStrictEqual(body.Content.Simple.Subject, { Data: "Your receipt", Charset: "UTF-8" })
        assert.deepStrictEqual(body.Content.Simple.Body, { Text: { Data: "Thanks.", Charset: "UTF-8" } })
        // Binary content must travel base64 in the MIME SES builds: its default is SEVEN_BIT.
        assert.deepStrictEqual(body.Content.Simple.Attachments, [
          {
            FileName: "facture été.pdf",
            RawContent: Buffer.from(pdf).toString("base64"),
            ContentType: "application/pdf",
            ContentDisposition: "ATTACHMENT",
            ContentTransferEncoding: "BASE64"
          }
        ])
      }).pipe(Effect.scoped)
    )

    it.effect("MessageRejected naming the sender -> SenderNotVerified", () =>
      Effect.gen(function* () {
        const error = yield* failure(
          sesError(
            400,
            "MessageRejected",
            "Email address is not verified. The following identities failed the check in region US-EAST-1: sender@acme.example"
          )
        )
        assert.strictEqual(error.reason._tag, "SenderNotVerified")
        assert.strictEqual((error.reason as ProviderError.SenderNotVerified).sender, "sender@acme.example")
        assert.isFalse(error.isRetryable)
        assert.instanceOf(error.cause, MessageRejected)
        assert.strictEqual(statusOf(error.cause), 400)
      })
    )

    it.effect("MessageRejected naming the sender with its display name, or its domain -> SenderNotVerified", () =>
      Effect.gen(function* () {
        for (const named of [
          "Acme <sender@acme.example>, sender@acme.example",
          "acme.example",
          "ACME.EXAMPLE, alice@example.com"
        ]) {
          const error = yield* failure(
            sesError(
              400,
              "MessageRejected",
              `Email address is not verified. The following identities failed the check in region EU-WEST-1: ${named}`
            )
          )
          assert.strictEqual(error.reason._tag, "SenderNotVerified", named)
        }
      })
    )

    it.effect(
      "MessageRejected naming only recipients (the sandbox) -> RecipientNotVerified with those recipients",
      () =>
        Effect.gen(function* () {
          const error = yield* failure(
            sesError(
              400,
              "MessageRejected",
              "Email address is not verified. The following identities failed the check in region US-EAST-1: bob@example.com, dave@example.com"
            )
          )
          assert.strictEqual(error.reason._tag, "RecipientNotVerified")
          assert.deepStrictEqual((error.reason as ProviderError.RecipientNotVerified).recipients, [
            "Bob@Example.com",
            "dave@example.com"
          ])
          assert.include(error.message, "Bob@Example.com, dave@example.com")
          assert.instanceOf(error.cause, MessageRejected)
        })
    )

    it.effect("MessageRejected with a list SES cut short with an ellipsis still names the recipients it shows", () =>
      Effect.gen(function* () {
        const error = yield* failure(
          sesError(
            400,
            "MessageRejected",
            "Email address is not verified. The following identities failed the check in region US-EAST-1: alice@example.com, carol@example.com..."
          )
        )
        assert.strictEqual(error.reason._tag, "RecipientNotVerified")
        assert.deepStrictEqual((error.reason as ProviderError.RecipientNotVerified).recipients, [
          "alice@example.com",
          "carol@example.com"
        ])
      })
    )

    it.effect("MessageRejected naming nobody -> SenderNotVerified, the usual cause", () =>
      Effect.gen(function* () {
        const error = yield* failure(sesError(400, "MessageRejected", "Email address is not verified."))
        assert.strictEqual(error.reason._tag, "SenderNotVerified")
      })
    )

    it.effect("MessageRejected for the message's size -> MessageTooLarge; for anything else -> InvalidRequest", () =>
      Effect.gen(function* () {
        const large = yield* failure(
          sesError(400, "MessageRejected", "Message length is more than 41943040 bytes long: '41943100'.")
        )
        assert.strictEqual(large.reason._tag, "MessageTooLarge")
        const other = yield* failure(sesError(400, "MessageRejected", "Illegal address"))
        assert.strictEqual(other.reason._tag, "InvalidRequest")
        assert.include(other.message, "Illegal address")
      })
    )

    it.effect("SendingPausedException -> SendingPaused, not permanent", () =>
      Effect.gen(function* () {
        const error = yield* failure(
          sesError(400, "SendingPausedException", "Email sending is disabled for this configuration set.")
        )
        assert.deepStrictEqual(
          { tag: error.reason._tag, permanent: (error.reason as ProviderError.SendingPaused).permanent },
          {
            tag: "SendingPaused",
            permanent: false
          }
        )
        assert.isFalse(error.isRetryable)
        assert.instanceOf(error.cause, SendingPausedException)
      })
    )

    it.effect("AccountSuspendedException -> SendingPaused, permanent", () =>
      Effect.gen(function* () {
        const error = yield* failure(
          sesError(
            400,
            "AccountSuspendedException",
            "Your account's ability to send email has been permanently restricted."
          )
        )
        assert.deepStrictEqual(
          { tag: error.reason._tag, permanent: (error.reason as ProviderError.SendingPaused).permanent },
          {
            tag: "SendingPaused",
            permanent: true
          }
        )
        assert.instanceOf(error.cause, AccountSuspendedException)
      })
    )

    it.effect("TooManyRequestsException -> RateLimited, retryable, with Retry-After when SES sends one", () =>
      Effect.gen(function* () {
        const plain = yield* failure(sesError(429, "TooManyRequestsException", "Maximum sending rate exceeded."))
        assert.strictEqual(plain.reason._tag, "RateLimited")
        assert.isTrue(plain.isRetryable)
        assert.isUndefined((plain.reason as ProviderError.RateLimited).retryAfter)
        assert.instanceOf(plain.cause, TooManyRequestsException)
        assert.strictEqual(statusOf(plain.cause), 429)

        const told = yield* failure(
          sesError(429, "TooManyRequestsException", "Too many requests.", { "retry-after": "3" })
        )
        assert.strictEqual(told.reason._tag, "RateLimited")
        assert.strictEqual(
          Duration.toMillis((told.reason as ProviderError.RateLimited).retryAfter ?? Duration.zero),
          3000
        )
      })
    )

    it.effect(
      "a spent daily quota (LimitExceededException, or throttling that says so) -> RateLimited that core will not retry",
      () =>
        Effect.gen(function* () {
          for (const answer of [
            sesError(400, "LimitExceededException", "Daily message quota exceeded."),
            sesError(429, "TooManyRequestsException", "Daily message quota exceeded.")
          ]) {
            const error = yield* failure(answer)
            assert.strictEqual(error.reason._tag, "RateLimited")
            const wait = Duration.toMillis((error.reason as ProviderError.RateLimited).retryAfter ?? Duration.zero)
            assert.strictEqual(wait, 10 * 60 * 1000)
          }
          const limited = yield* failure(sesError(400, "LimitExceededException", "Daily message quota exceeded."))
          assert.instanceOf(limited.cause, LimitExceededException)
        })
    )

    it.effect("MailFromDomainNotVerified, BadRequest and NotFound (configuration set) -> InvalidRequest", () =>
      Effect.gen(function* () {
        for (const [answer, type] of [
          [
            sesError(400, "MailFromDomainNotVerifiedException", "The MAIL FROM domain is not verified."),
            MailFromDomainNotVerifiedException
          ],
          [sesError(400, "BadRequestException", "Missing final '@domain'"), BadRequestException],
          [sesError(404, "NotFoundException", "Configuration set <transactional> does not exist."), NotFoundException]
        ] as const) {
          const error = yield* failure(answer)
          assert.strictEqual(error.reason._tag, "InvalidRequest")
          assert.isFalse(error.isRetryable)
          assert.isTrue(error.cause instanceof type, `the cause is the SDK's ${type.name}`)
        }
      })
    )

    it.effect("500 and 503 -> Unavailable, possibly sent (so not retried)", () =>
      Effect.gen(function* () {
        for (const answer of [
          sesError(500, "InternalFailure", "An internal error occurred."),
          { status: 503, headers: { "content-type": "text/html" }, body: "<html>Service Unavailable</html>" }
        ] as const) {
          const error = yield* failure(answer)
          assert.strictEqual(error.reason._tag, "Unavailable")
          assert.isTrue((error.reason as ProviderError.Unavailable).possiblySent)
          assert.isFalse(error.isRetryable)
        }
      })
    )

    it.effect("a 200 without a MessageId -> Unavailable, possibly sent", () =>
      Effect.gen(function* () {
        const error = yield* failure({ status: 200, headers: { "content-type": "application/json" }, body: "{}" })
        assert.strictEqual(error.reason._tag, "Unavailable")
        assert.isTrue((error.reason as ProviderError.Unavailable).possiblySent)
        assert.include(error.message, "without a MessageId")
        assert.isFalse(error.isRetryable)
      })
    )

    it.effect("a connection dropped after the request was sent -> Unavailable, possibly sent", () =>
      Effect.gen(function* () {
        const error = yield* failure("reset")
        assert.strictEqual(error.reason._tag, "Unavailable")
        assert.isTrue((error.reason as ProviderError.Unavailable).possiblySent)
      })
    )

    it.effect("a timeout after the request was sent -> Unavailable, possibly sent", () =>
      Effect.gen(function* () {
        const stub = yield* Stub
        stub.answer = () => "hang"
        const client = new SESv2Client({
          region: "us-east-1",
          endpoint: stub.url,
          credentials: { accessKeyId: keyId, secretAccessKey: secret },
          maxAttempts: 1,
          requestHandler: { socketTimeout: 300 }
        })
        const provider = yield* SesEmailProvider.make({ client })
        const error = yield* Effect.flip(provider.send(message()))
        client.destroy()
        assert.strictEqual(error.reason._tag, "Unavailable")
        assert.isTrue((error.reason as ProviderError.Unavailable).possiblySent)
      }).pipe(Effect.scoped)
    )

    it.effect("no answer within the provider's own timeout -> Unavailable, possibly sent, after one request", () =>
      Effect.gen(function* () {
        const stub = yield* Stub
        stub.answer = () => "hang"
        const before = stub.requests.length
        const provider = yield* SesEmailProvider.make({ ...options(stub.url), timeout: "300 millis" })
        const started = Date.now()
        const error = yield* Effect.flip(provider.send(message()))
        const waited = Date.now() - started
        assert.strictEqual(error.reason._tag, "Unavailable")
        assert.isTrue((error.reason as ProviderError.Unavailable).possiblySent)
        assert.include(error.message, "did not answer within")
        assert.isFalse(error.isRetryable)
        assert.isAtLeast(waited, 250)
        assert.isBelow(waited, 5000, "the SDK's own timeouts, not ours, ended the request")
        assert.strictEqual(stub.requests.length - before, 1)
      }).pipe(Effect.scoped)
    )

    it.effect("credentials refused (even when SES echoes the Authorization header) -> Unknown, without the key", () =>
      Effect.gen(function* () {
        const error = yield* failure((request) =>
          sesError(
            403,
            "IncompleteSignatureException",
            `Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization=${request.headers.authorization}`
          )
        )
        assert.strictEqual(error.reason._tag, "Unknown")
        assert.include(error.message, "Credential=<redacted>/")
        assert.isFalse(error.isRetryable)
        assert.include((error.cause as Error).message, keyId, "the SDK's own error is kept untouched as cause")
      })
    )
  })
})

describe("SES failures without an answer", () => {
  layer(StubLive, { timeout: 30_000, excludeTestServices: true })((it) => {
    it.effect("connection refused -> Unavailable, not sent (so retryable)", () =>
      Effect.gen(function* () {
        const port = yield* Effect.promise(refusedPort)
        const provider = yield* SesEmailProvider.make(options(`http://127.0.0.1:${port}`))
        const error = yield* Effect.flip(provider.send(message()))
        assert.strictEqual(error.reason._tag, "Unavailable")
        assert.isFalse((error.reason as ProviderError.Unavailable).possiblySent)
        assert.isTrue(error.isRetryable)
        assert.strictEqual((error.cause as { code?: string }).code, "ECONNREFUSED")
      }).pipe(Effect.scoped)
    )

    // The same failures, with the same verdicts and words, as packages/postmark/test/errors.test.ts.
    for (const fault of networkFaultCases) {
      it.effect(
        `${fault.name} -> Unavailable, ${fault.possiblySent ? "possibly sent" : "not sent (so retryable)"}`,
        () =>
          Effect.gen(function* () {
            const target = yield* Effect.acquireRelease(Effect.promise(fault.start), (t) => Effect.promise(t.close))
            const provider = yield* SesEmailProvider.make(options(`${target.scheme}://${target.host}`))
            const error = yield* Effect.flip(provider.send(message()))
            assert.strictEqual(error.reason._tag, "Unavailable")
            assert.strictEqual((error.reason as ProviderError.Unavailable).possiblySent, fault.possiblySent)
            assert.strictEqual(error.isRetryable, !fault.possiblySent)
            assert.match(error.message, fault.message("SES"))
          }).pipe(Effect.scoped)
      )
    }

    it.effect("a peer that stops reading the attachments at the deadline -> Unavailable, possibly sent", () =>
      Effect.gen(function* () {
        // It takes the connection and reads nothing: the streamed body stalls once the socket's buffers fill.
        const sockets: Array<Socket> = []
        const peer = yield* Effect.acquireRelease(
          Effect.promise(
            () =>
              new Promise<Server>((resolve) => {
                const server = createNetServer((socket) => {
                  socket.pause()
                  sockets.push(socket)
                })
                server.listen(0, "127.0.0.1", () => resolve(server))
              })
          ),
          (server) =>
            Effect.promise(
              () =>
                new Promise<void>((resolve) => {
                  for (const socket of sockets) socket.destroy()
                  server.close(() => resolve())
                })
            )
        )
        const endpoint = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`
        const provider = yield* SesEmailProvider.make({ ...options(endpoint), timeout: "500 millis" })
        const content = new Uint8Array(32 * 1024 * 1024)
        const attachments = [{ filename: "scan.pdf", contentType: "application/pdf", content }]
        const error = yield* Effect.flip(provider.send(message({ attachments })))
        assert.strictEqual(error.reason._tag, "Unavailable")
        assert.isTrue((error.reason as ProviderError.Unavailable).possiblySent)
        assert.include(error.message, "did not answer within")
        assert.strictEqual(sockets.length, 1, "one request, its body cut short")
      }).pipe(Effect.scoped)
    )

    it.effect("an injected client is used as given", () =>
      Effect.gen(function* () {
        const stub = yield* Stub
        stub.answer = () => accepted("0100018f-injected-000000")
        const client = new SESv2Client({
          region: "us-east-1",
          endpoint: stub.url,
          credentials: { accessKeyId: "AKIDINJECTED", secretAccessKey: "injected-secret" }
        })
        const provider = yield* SesEmailProvider.make({ client, endpoint: "http://127.0.0.1:1" })
        assert.deepStrictEqual(yield* provider.send(message()), { messageId: "0100018f-injected-000000" })
        assert.include(String(stub.requests.at(-1)?.headers.authorization), "Credential=AKIDINJECTED/")
        client.destroy()
      }).pipe(Effect.scoped)
    )
  })
})

describe("through core's Mailer, retries happen once, in core", () => {
  const principal = { orgId: "org_acme", slug: "acme" }
  const request = { from: "sender@acme.example", to: ["alice@example.com"], subject: "Hi", body: { text: "Hi" } }
  const mailer = (url: string) =>
    Mailroom.layer({
      provider: SesEmailProvider.layer(options(url)),
      store: ObjectStore.layerMemory(),
      organizations: Organizations.layerStatic({
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"] }]
      }),
      mailer: { retry: { maxAttempts: 3, baseDelay: "5 millis" } }
    })
  const sendThroughMailer = Effect.gen(function* () {
    const stub = yield* Stub
    const before = stub.requests.length
    const { outcome, record } = yield* Effect.gen(function* () {
      const outcome = yield* Effect.result(Effect.flatMap(Mailer.Mailer, (m) => m.send(principal, request)))
      const log = yield* MessageLog.MessageLog
      const record =
        outcome._tag === "Success" ? yield* log.find(principal.orgId, outcome.success.response.message_id) : undefined
      return { outcome, record }
    }).pipe(Effect.provide(mailer(stub.url)))
    return { outcome, record, requests: stub.requests.length - before }
  })

  layer(StubLive, { timeout: 30_000, excludeTestServices: true })((it) => {
    it.effect("throttling is retried by core alone: three attempts reach SES, not nine", () =>
      Effect.gen(function* () {
        const stub = yield* Stub
        stub.answer = () => sesError(429, "TooManyRequestsException", "Maximum sending rate exceeded.")
        const { outcome, requests } = yield* sendThroughMailer
        assert.strictEqual(requests, 3)
        assert.isTrue(outcome._tag === "Failure" && outcome.failure._tag === "ProviderError")
      })
    )

    it.effect("throttling that clears is a success on the next attempt", () =>
      Effect.gen(function* () {
        const stub = yield* Stub
        let calls = 0
        stub.answer = () =>
          ++calls === 1 ? sesError(429, "TooManyRequestsException", "Slow down.") : accepted("0100018f-after-000000")
        const { outcome, record, requests } = yield* sendThroughMailer
        assert.strictEqual(requests, 2)
        assert.strictEqual(outcome._tag, "Success")
        assert.strictEqual(record?.provider_message_id, "0100018f-after-000000", "the second attempt's SES id is kept")
      })
    )

    it.effect("a spent quota and a 5xx reach SES once", () =>
      Effect.gen(function* () {
        const stub = yield* Stub
        for (const answer of [
          sesError(400, "LimitExceededException", "Daily message quota exceeded."),
          sesError(500, "InternalFailure", "An internal error occurred.")
        ]) {
          stub.answer = () => answer
          const { outcome, requests } = yield* sendThroughMailer
          assert.strictEqual(requests, 1)
          assert.isTrue(outcome._tag === "Failure")
        }
      })
    )
  })
})
