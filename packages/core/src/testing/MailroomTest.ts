// mailroom for an application's own tests, in one line: the memory provider (simulator addresses
// included), a memory store and one organisation, with an inbox to assert on (`awaitEmail`,
// `emailsTo`, `lastEmailTo`, `links`), for Effect users (`layer`) and Promise users (`make`).
import * as Clock from "effect/Clock"
import type * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as EffectDuration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as EmailProvider from "../EmailProvider.js"
import { type Link, linksOf } from "../internal/links.js"
import * as MailEvent from "../MailEvent.js"
import * as MailEvents from "../MailEvents.js"
import * as Mailroom from "../Mailroom.js"
import * as ObjectStore from "../ObjectStore.js"
import * as Organizations from "../Organizations.js"

/** A link of a message: its URL, the text a reader sees, and the part it is in. */
export type { Link } from "../internal/links.js"

/** A message the application sent, as the provider received it. */
export interface TestEmail {
  /** The `message_id` the send answered. */
  readonly id: string
  readonly organizationId: string | undefined
  readonly from: EmailProvider.Sender
  readonly to: ReadonlyArray<string>
  readonly cc: ReadonlyArray<string>
  readonly bcc: ReadonlyArray<string>
  readonly replyTo: ReadonlyArray<string>
  readonly subject: string
  readonly html: string | undefined
  readonly text: string | undefined
  readonly attachments: ReadonlyArray<EmailProvider.OutboundAttachment>
  readonly headers: ReadonlyArray<EmailProvider.Header>
  readonly tags: ReadonlyArray<EmailProvider.Tag>
  /** Every `<a href>` of the HTML with its text, then every URL of the text part. */
  readonly links: ReadonlyArray<Link>
  readonly sentAt: Date
}

/** What `awaitEmail` waits for, and how long. */
export interface AwaitEmail {
  /** A recipient (to, cc or bcc), compared without case. */
  readonly to: string
  /** Contained in the subject, without case. */
  readonly subject?: string
  /** Milliseconds, of the wall clock (a `TestClock` does not hold it). Default 5000. */
  readonly timeout?: number
}

/** No matching message arrived in time. */
export class EmailNotReceived extends Data.TaggedError("EmailNotReceived")<{ readonly message: string }> {}

/** What a test asserts on: every message sent since the inbox was made (or cleared). */
export interface TestInbox {
  /** Every message, oldest first. */
  readonly emails: ReadonlyArray<TestEmail>
  /** The newest matching message already sent, else the next one, within the timeout. */
  readonly awaitEmail: (query: AwaitEmail) => Effect.Effect<TestEmail, EmailNotReceived>
  /** The messages to an address (to, cc or bcc, without case), newest first. */
  readonly emailsTo: (address: string) => Effect.Effect<ReadonlyArray<TestEmail>>
  /** The newest message to an address, or undefined. */
  readonly lastEmailTo: (address: string) => Effect.Effect<TestEmail | undefined>
  /** Forgets every message. */
  readonly clear: Effect.Effect<void>
}

export const TestInbox: Context.Service<TestInbox, TestInbox> = Context.Service("@mailroom/core/testing/TestInbox")

/** The links of a message, as `TestEmail.links` has them: `links(await inbox.awaitEmail(...))[0].url`. */
export const links = (email: { readonly links: ReadonlyArray<Link> }): ReadonlyArray<Link> => email.links

const isTo = (address: string) => (email: TestEmail) =>
  [...email.to, ...email.cc, ...email.bcc].some((r) => r.toLowerCase() === address.toLowerCase())

const matches = (query: AwaitEmail) => (email: TestEmail) =>
  isTo(query.to)(email) &&
  (query.subject === undefined || email.subject.toLowerCase().includes(query.subject.toLowerCase()))

/** An inbox, and the function the provider calls with each message it accepts. */
export const makeInbox = (): TestInbox & {
  readonly record: (id: string, email: EmailProvider.OutboundEmail, sentAt: Date) => void
} => {
  const emails: Array<TestEmail> = []
  const waiting = new Set<(email: TestEmail) => void>()
  const newestFirst = (filter: (email: TestEmail) => boolean) => emails.filter(filter).reverse()
  return {
    emails,
    record: (id, email, sentAt) => {
      const entry: TestEmail = {
        id,
        organizationId: email.metadata?.[MailEvent.organizationKey],
        from: email.from,
        to: email.to,
        cc: email.cc,
        bcc: email.bcc,
        replyTo: email.replyTo,
        subject: email.subject,
        html: email.html,
        text: email.text,
        attachments: email.attachments,
        headers: email.headers ?? [],
        tags: email.tags ?? [],
        links: linksOf(email.html, email.text),
        sentAt
      }
      emails.push(entry)
      for (const wake of [...waiting]) wake(entry)
    },
    // The wall clock, not Effect's: under a TestClock a missing message must still fail the test, saying so.
    awaitEmail: (query) =>
      Effect.callback<TestEmail, EmailNotReceived>((resume) => {
        const [found] = newestFirst(matches(query))
        if (found !== undefined) return resume(Effect.succeed(found))
        const timeout = query.timeout ?? 5000
        const wake = (email: TestEmail) => {
          if (!matches(query)(email)) return
          done()
          resume(Effect.succeed(email))
        }
        const timer = setTimeout(() => {
          done()
          const about = query.subject === undefined ? "" : ` with "${query.subject}" in its subject`
          resume(Effect.fail(new EmailNotReceived({ message: `no email to ${query.to}${about} within ${timeout} ms` })))
        }, timeout)
        const done = () => {
          clearTimeout(timer)
          waiting.delete(wake)
        }
        waiting.add(wake)
        return Effect.sync(done)
      }),
    emailsTo: (address) => Effect.sync(() => newestFirst(isTo(address))),
    lastEmailTo: (address) => Effect.sync(() => newestFirst(isTo(address))[0]),
    clear: Effect.sync(() => {
      emails.length = 0
    })
  }
}

/** The one organisation `MailroomTest.layer` sets up, and its provider's behaviour. */
export interface Options {
  /** The domains the application sends from (its one organisation's). Default `["example.com"]`. */
  readonly domains?: ReadonlyArray<string>
  /** Several organisations instead (`Organizations.layerStatic`'s options); `domains` is then unused. */
  readonly organizations?: Organizations.StaticOptions
  /** How long `delayed@simulator.mailroom.test` waits before its delivery. Default 1 second. */
  readonly simulatedDelay?: EffectDuration.Duration
}

const providerLayer = (inbox: ReturnType<typeof makeInbox>, options: Options) =>
  Layer.effect(
    EmailProvider.EmailProvider,
    Effect.gen(function* () {
      const events = yield* Effect.serviceOption(MailEvents.MailEvents)
      const memory = EmailProvider.makeMemory(
        {
          ...(events._tag === "Some" ? { events: events.value } : {}),
          ...(options.simulatedDelay === undefined ? {} : { simulatedDelay: options.simulatedDelay })
        },
        yield* Effect.scope
      )
      return EmailProvider.EmailProvider.of({
        ...memory,
        send: (email) =>
          Effect.tap(memory.send(email), ({ messageId }) =>
            Effect.map(Clock.currentTimeMillis, (now) => inbox.record(messageId, email, new Date(now)))
          )
      })
    })
  )

const layers = (inbox: ReturnType<typeof makeInbox>, options: Options) => ({
  provider: providerLayer(inbox, options),
  store: ObjectStore.layerMemory(),
  organizations:
    options.organizations === undefined
      ? Organizations.single({ domains: options.domains ?? ["example.com"] })
      : Organizations.layerStatic(options.organizations)
})

/**
 * Every service of `Mailroom.layer` on memory (the provider acting out simulator addresses through
 * the real event pipeline), and the `TestInbox` of the messages it sent. Fresh for each test it is
 * provided to.
 */
export const layer = (options: Options = {}): Layer.Layer<Mailroom.Services | TestInbox, Config.ConfigError> =>
  Layer.unwrap(
    Effect.sync(() => {
      const inbox = makeInbox()
      return Layer.merge(Mailroom.layer(layers(inbox, options)), Layer.succeed(TestInbox, inbox))
    })
  )

/** `TestInbox`'s `awaitEmail` from the context: `const mail = yield* MailroomTest.awaitEmail({ to })`. */
export const awaitEmail = (query: AwaitEmail): Effect.Effect<TestEmail, EmailNotReceived, TestInbox> =>
  Effect.flatMap(TestInbox, (inbox) => inbox.awaitEmail(query))

/** `TestInbox`'s `emailsTo` from the context. */
export const emailsTo = (address: string): Effect.Effect<ReadonlyArray<TestEmail>, never, TestInbox> =>
  Effect.flatMap(TestInbox, (inbox) => inbox.emailsTo(address))

/** `TestInbox`'s `lastEmailTo` from the context. */
export const lastEmailTo = (address: string): Effect.Effect<TestEmail | undefined, never, TestInbox> =>
  Effect.flatMap(TestInbox, (inbox) => inbox.lastEmailTo(address))

/** The Promise client (`Mailroom.make`) on the same memory layers, with the inbox's calls as Promises. */
export interface TestClient extends Mailroom.Client {
  readonly emails: ReadonlyArray<TestEmail>
  /** Rejects with `EmailNotReceived` when no matching message arrives within the timeout. */
  readonly awaitEmail: (query: AwaitEmail) => Promise<TestEmail>
  readonly emailsTo: (address: string) => Promise<ReadonlyArray<TestEmail>>
  readonly lastEmailTo: (address: string) => Promise<TestEmail | undefined>
  readonly clear: () => Promise<void>
}

/** `Mailroom.make` on memory, and the inbox of what it sent: for tests that do not use Effect. */
export const make = (options: Options = {}): TestClient => {
  const inbox = makeInbox()
  const client = Mailroom.make(layers(inbox, options))
  return {
    ...client,
    emails: inbox.emails,
    awaitEmail: (query) => Effect.runPromise(inbox.awaitEmail(query)),
    emailsTo: (address) => Effect.runPromise(inbox.emailsTo(address)),
    lastEmailTo: (address) => Effect.runPromise(inbox.lastEmailTo(address)),
    clear: () => Effect.runPromise(inbox.clear)
  }
}
