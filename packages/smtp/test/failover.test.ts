// core's EmailProvider.failover over real SMTP servers: the conformance suite through a failover whose
// primary refuses connections, then the cases counted at both peers (smtp-server, scripted).
import { assert, describe, it } from "@effect/vitest"
import { EmailProvider, Mailer, Mailroom, MessageLog, ObjectStore, Organizations } from "@mailroom/core"
import { EmailProviderSuite, outboundEmail } from "@mailroom/core/testing"
import { freePort } from "@mailroom/test-support"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { afterAll, beforeAll, beforeEach } from "vitest"
import { SmtpEmailProvider } from "../src/index.js"
import { AiosmtpdPeer } from "./support/Aiosmtpd.js"
import { parseReceived, toReceivedEmail } from "./support/received.js"
import * as SmtpPeer from "./support/SmtpPeer.js"

// Nothing listens there: a connection to it is refused.
const refusing = { host: "127.0.0.1", port: await freePort() }

EmailProviderSuite("a failover of smtp (refusing connections) and smtp on aiosmtpd", {
  tagsNotVisible:
    "SMTP carries no metadata (it would only be read back by events, which SMTP has none of); tags travel as X-Mailroom-Tag headers",
  layer: EmailProvider.layerFailover([
    SmtpEmailProvider.layer(refusing),
    {
      name: "aiosmtpd",
      layer: Layer.unwrap(
        AiosmtpdPeer.use((peer) => Effect.succeed(SmtpEmailProvider.layer({ host: "127.0.0.1", port: peer.port })))
      )
    }
  ]).pipe(Layer.provideMerge(AiosmtpdPeer.layer())),
  read: (messageId) =>
    AiosmtpdPeer.use((peer) => Effect.promise(async () => toReceivedEmail(await peer.byMessageId(messageId))))
})

const message = (subject: string) => outboundEmail({ subject })

let primary: SmtpPeer.Peer
let secondary: SmtpPeer.Peer

beforeAll(async () => {
  ;[primary, secondary] = await Promise.all([
    SmtpPeer.start({ hideSTARTTLS: true }),
    SmtpPeer.start({ hideSTARTTLS: true })
  ])
}, 30_000)
afterAll(async () => {
  await Promise.all([primary?.close(), secondary?.close()])
})
beforeEach(() => {
  primary.reset()
  secondary.reset()
})

const smtpTo = (port: number) => SmtpEmailProvider.layer({ host: "127.0.0.1", port, socketTimeout: "10 seconds" })

/** smtp (the primary, or a refused connection) then smtp-backup, with this circuit. */
const chain = (
  options: EmailProvider.FailoverOptions = {},
  first: Layer.Layer<EmailProvider.EmailProvider, unknown> = smtpTo(primary.port)
) => EmailProvider.layerFailover([first, { name: "smtp-backup", layer: smtpTo(secondary.port) }], options)

/** Runs `f` with the failover provider, its pools closed afterwards. */
const withChain = <A, E>(
  f: (provider: EmailProvider.EmailProvider) => Effect.Effect<A, E>,
  options?: EmailProvider.FailoverOptions,
  first?: Layer.Layer<EmailProvider.EmailProvider, unknown>
) => EmailProvider.EmailProvider.use(f).pipe(Effect.provide(chain(options, first)))

/** Connections each peer has opened since `connectionsFrom()` was called (the peers count from their start). */
const connectionsFrom = () => {
  const before = [primary.connections(), secondary.connections()]
  return () => [primary.connections() - (before[0] ?? 0), secondary.connections() - (before[1] ?? 0)]
}

/** Message-IDs each peer took, in order. */
const messageIds = (peer: SmtpPeer.Peer) =>
  Effect.promise(() => Promise.all(peer.received.map(async (r) => (await parseReceived(r)).messageId)))

describe("failover over SMTP", () => {
  it.effect("the primary refusing connections: every message goes out once, through the secondary", () =>
    withChain(
      (provider) =>
        Effect.gen(function* () {
          const sent = []
          for (const subject of ["one", "two", "three"]) sent.push(yield* provider.send(message(subject)))
          assert.deepStrictEqual(
            sent.map((r) => r.provider),
            ["smtp-backup", "smtp-backup", "smtp-backup"]
          )
          assert.deepStrictEqual(
            yield* messageIds(secondary),
            sent.map((r) => `<${r.messageId}>`),
            "each message once, in order"
          )
          assert.strictEqual(secondary.attempts(), 3)
        }),
      {},
      SmtpEmailProvider.layer(refusing)
    )
  )

  it.effect("a 421 greeting (not sent) fails over", () =>
    withChain((provider) =>
      Effect.gen(function* () {
        primary.script({ connect: { code: 421, text: "4.3.2 Service not available, closing channel" } })
        const result = yield* provider.send(message("greeted 421"))
        assert.strictEqual(result.provider, "smtp-backup")
        assert.deepStrictEqual([primary.attempts(), secondary.attempts()], [0, 1])
        assert.deepStrictEqual(yield* messageIds(secondary), [`<${result.messageId}>`])
      })
    )
  )

  it.effect("a 451 after the final dot (the server says it did not take it) fails over", () =>
    withChain((provider) =>
      Effect.gen(function* () {
        primary.script({ data: { code: 451, text: "4.3.0 Temporary local problem, try later" } })
        const result = yield* provider.send(message("451 after DATA"))
        assert.strictEqual(result.provider, "smtp-backup")
        assert.strictEqual(primary.attempts(), 1, "the primary received it, and refused it")
        assert.strictEqual(primary.received.length, 0)
        assert.deepStrictEqual(yield* messageIds(secondary), [`<${result.messageId}>`])
      })
    )
  )

  it.effect("a 550 recipient rejection does not fail over: the secondary is not called", () =>
    withChain((provider) =>
      Effect.gen(function* () {
        primary.script({ rcptTo: () => ({ code: 550, text: "5.1.1 No such user here" }) })
        const connections = connectionsFrom()
        const error = yield* Effect.flip(provider.send(message("to nobody")))
        assert.strictEqual(error.provider, "smtp")
        assert.strictEqual(error.reason._tag, "RecipientSuppressed")
        assert.strictEqual(primary.attempts(), 0)
        assert.strictEqual(connections()[1], 0, "the secondary was not called")
      })
    )
  )

  it.effect("the circuit opens after 3 failures (the primary is not called), and half-opens after its pause", () =>
    withChain(
      (provider) =>
        Effect.gen(function* () {
          primary.script({ connect: { code: 421, text: "4.3.2 Try again later" } })
          for (let i = 0; i < 3; i++) yield* provider.send(message(`failing ${i}`))
          const opened = primary.connections()
          for (let i = 0; i < 3; i++) yield* provider.send(message(`skipping ${i}`))
          assert.strictEqual(primary.connections(), opened, "not called while open")
          assert.strictEqual(secondary.received.length, 6)

          // After the pause one send probes the primary, now healthy, and closes the circuit.
          primary.script({})
          yield* TestClock.adjust("30 seconds")
          const probe = yield* provider.send(message("probe"))
          const next = yield* provider.send(message("closed again"))
          assert.deepStrictEqual([probe.provider, next.provider], ["smtp", "smtp"])
          assert.isAbove(primary.connections(), opened)
          assert.deepStrictEqual(yield* messageIds(primary), [`<${probe.messageId}>`, `<${next.messageId}>`])
          assert.strictEqual(secondary.received.length, 6)
        }),
      { circuit: { failures: 3, openDuration: "30 seconds" } }
    )
  )
})

describe("failover over SMTP, through core's Mailer", () => {
  const organizations = Organizations.layerStatic({
    serviceDomain: "mailroom.test",
    organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"] }]
  })
  /** One message through the Mailer (three attempts allowed) on the failover: the record it left. */
  const mailerSend = () =>
    Effect.gen(function* () {
      const mailer = yield* Mailer.Mailer
      const log = yield* MessageLog.MessageLog
      const sent = yield* Effect.result(
        mailer.send(
          { orgId: "org_acme", slug: "acme" },
          { from: "billing@acme.example", to: ["alice@example.com"], subject: "Your invoice", body: { text: "Hi" } }
        )
      )
      const [record] = (yield* log.list("org_acme", { limit: 10 })).data
      return { sent, record }
    }).pipe(
      Effect.provide(
        Mailroom.layer({
          provider: chain(),
          store: ObjectStore.layerMemory(),
          organizations,
          mailer: { retry: { maxAttempts: 3, baseDelay: "5 millis" } }
        })
      )
    )

  it.live("the primary dropping the connection after DATA: unknown, the secondary not called, nothing sent twice", () =>
    Effect.gen(function* () {
      primary.script({ data: "drop" })
      const connections = connectionsFrom()
      const { sent, record } = yield* mailerSend()
      assert.strictEqual(sent._tag, "Failure")
      assert.strictEqual(record?.status, "unknown")
      assert.strictEqual(record?.provider, "smtp")
      assert.match(record?.reason ?? "", /may have been sent/)
      assert.strictEqual(primary.attempts(), 1, "the primary received it once")
      assert.deepStrictEqual([connections()[1], secondary.attempts()], [0, 0], "the secondary was not called")
    })
  )

  it.live("both refusing (421): one call each, no retry of the failover; the record names the last", () =>
    Effect.gen(function* () {
      primary.script({ connect: { code: 421, text: "4.3.2 Try again later" } })
      secondary.script({ connect: { code: 421, text: "4.3.2 Try again later" } })
      const connections = connectionsFrom()
      const { sent, record } = yield* mailerSend()
      assert.strictEqual(sent._tag, "Failure")
      assert.strictEqual(record?.status, "failed")
      assert.strictEqual(record?.provider, "smtp-backup")
      assert.match(record?.reason ?? "", /before it: smtp: /)
      assert.deepStrictEqual(connections(), [1, 1])
    })
  )

  it.live("the record names the provider that sent", () =>
    Effect.gen(function* () {
      primary.script({ connect: { code: 421, text: "4.3.2 Try again later" } })
      const { record } = yield* mailerSend()
      assert.strictEqual(record?.status, "sent")
      assert.strictEqual(record?.provider, "smtp-backup")
      const [received] = yield* messageIds(secondary)
      assert.strictEqual(received, `<${record?.provider_message_id}>`)
    })
  )
})
