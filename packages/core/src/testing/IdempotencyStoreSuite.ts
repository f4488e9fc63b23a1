// The conformance suite every IdempotencyStore runs against its real peer: reserve, complete and
// release as the Mailer relies on them, expiry on the real clock, scoping, and concurrent reserves.
import { randomUUID } from "node:crypto"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Entry, IdempotencyStore, type Scope } from "../IdempotencyStore.js"
import type { SendEmailResponse } from "../Wire.js"

export interface IdempotencyStoreSuiteOptions {
  /**
   * Builds a store that keeps entries for `retention`. It is called once with an hour and once with
   * `shortRetention`; entries of a shared store may outlive a run, so the suite uses fresh keys.
   */
  readonly layer: (options: { readonly retention: Duration.Duration }) => Layer.Layer<IdempotencyStore, unknown>
  /** The retention of the expiry cases, waited out on the real clock. Default 1 second. */
  readonly shortRetention?: Duration.Input
  /**
   * True when two stores built by `layer` with the same options share their entries (one directory,
   * one Redis), as several instances of a server do: the suite then checks they act as one.
   */
  readonly sharedByInstances?: boolean
}

const response: SendEmailResponse = {
  message_id: "0100018f-e5c3-7c1e-9d2b-3a6f4b1c2d3e",
  from: "Zoë <billing@acme.example>",
  to: ["alice@example.com", "bob@example.com"],
  subject: "Votre reçu n° 42 ✔ — 日本語",
  attachments: ["attachments/org_acme/1700000000000-reçu.pdf"]
}

export const IdempotencyStoreSuite = (name: string, options: IdempotencyStoreSuiteOptions): void => {
  const run = randomUUID()
  let n = 0
  const fresh = (orgId = "org_acme"): Scope => ({ orgId, key: `conformance-${run}-${n++}` })
  const shortRetention = Duration.fromInputUnsafe(options.shortRetention ?? "1 second")
  // Sleeps are fractions of the retention, so a slow machine widens every margin alike.
  const wait = (fraction: number) => Effect.sleep(Duration.millis(Duration.toMillis(shortRetention) * fraction))
  const reserve = (scope: Scope, fingerprint: string) =>
    Effect.flatMap(IdempotencyStore, (s) => s.reserve(scope, fingerprint))
  const complete = (scope: Scope, entry: Entry) => Effect.flatMap(IdempotencyStore, (s) => s.complete(scope, entry))
  const release = (scope: Scope) => Effect.flatMap(IdempotencyStore, (s) => s.release(scope))

  /** Many reserves of one key at once: exactly one wins, and every other sees the winner's request. */
  const race = (scope: Scope) =>
    Effect.gen(function* () {
      const fingerprints = Array.from({ length: 25 }, (_, i) => `f${i}`)
      const answers = yield* Effect.forEach(fingerprints, (f) => reserve(scope, f), { concurrency: "unbounded" })
      const winners = fingerprints.filter((_, i) => answers[i] === undefined)
      assert.strictEqual(winners.length, 1, `exactly one reserve wins, not ${winners.length}`)
      for (const answer of answers.filter((a) => a !== undefined)) {
        assert.deepStrictEqual(answer, { _tag: "InFlight", fingerprint: winners[0] as string })
      }
    })

  describe(`IdempotencyStoreSuite: ${name}`, () => {
    layer(options.layer({ retention: Duration.hours(1) }), { timeout: 30_000, excludeTestServices: true })((it) => {
      it.effect("a first reserve wins; later ones see it in flight with its fingerprint, whatever theirs", () =>
        Effect.gen(function* () {
          const scope = fresh()
          assert.isUndefined(yield* reserve(scope, "first"))
          assert.deepStrictEqual(yield* reserve(scope, "first"), { _tag: "InFlight", fingerprint: "first" })
          assert.deepStrictEqual(yield* reserve(scope, "other"), { _tag: "InFlight", fingerprint: "first" })
        })
      )

      it.effect("a completed entry is replayed with its response, unchanged by later reserves", () =>
        Effect.gen(function* () {
          const scope = fresh()
          assert.isUndefined(yield* reserve(scope, "f"))
          yield* complete(scope, { _tag: "Completed", fingerprint: "f", response })
          const completed: Entry = { _tag: "Completed", fingerprint: "f", response }
          assert.deepStrictEqual(yield* reserve(scope, "f"), completed)
          assert.deepStrictEqual(yield* reserve(scope, "g"), completed)
        })
      )

      it.effect("an uncertain entry is replayed as uncertain", () =>
        Effect.gen(function* () {
          const scope = fresh()
          assert.isUndefined(yield* reserve(scope, "f"))
          yield* complete(scope, { _tag: "Uncertain", fingerprint: "f" })
          assert.deepStrictEqual(yield* reserve(scope, "f"), { _tag: "Uncertain", fingerprint: "f" })
        })
      )

      it.effect("release frees the key for the next request; releasing a free key is harmless", () =>
        Effect.gen(function* () {
          const scope = fresh()
          yield* release(scope)
          assert.isUndefined(yield* reserve(scope, "f"))
          yield* release(scope)
          assert.isUndefined(yield* reserve(scope, "g"))
          assert.deepStrictEqual(yield* reserve(scope, "f"), { _tag: "InFlight", fingerprint: "g" })
        })
      )

      it.effect("keys are per organisation: the same key elsewhere is another entry", () =>
        Effect.gen(function* () {
          const acme = fresh("org_acme")
          const globex = { orgId: "org_globex", key: acme.key }
          assert.isUndefined(yield* reserve(acme, "fa"))
          assert.isUndefined(yield* reserve(globex, "fg"))
          yield* complete(acme, { _tag: "Completed", fingerprint: "fa", response })
          assert.deepStrictEqual(yield* reserve(globex, "x"), { _tag: "InFlight", fingerprint: "fg" })
          yield* release(globex)
          assert.deepStrictEqual(yield* reserve(acme, "x"), { _tag: "Completed", fingerprint: "fa", response })
          assert.isUndefined(yield* reserve(globex, "x"))
        })
      )

      it.effect("an organisation and key never run together: (a:b, c) and (a, b:c) are two entries", () =>
        Effect.gen(function* () {
          const { key } = fresh()
          assert.isUndefined(yield* reserve({ orgId: `org:${key}`, key: "c" }, "f1"))
          assert.isUndefined(yield* reserve({ orgId: "org", key: `${key}:c` }, "f2"))
          assert.isUndefined(yield* reserve({ orgId: "org", key: `${key}",c` }, "f3"))
        })
      )

      it.effect("any key the API accepts is stored: 256 visible ASCII characters, slashes, dots, globs", () =>
        Effect.gen(function* () {
          const { key } = fresh()
          const keys = [
            `${key}-${"k".repeat(256 - key.length - 1)}`,
            `../../${key}`,
            `${key}/a/b`,
            `${key}*?[]{}`,
            `${key}%00\\~!"#$&'()+,;<=>@^\`|`
          ]
          for (const k of keys) {
            const scope = { orgId: "org_acme", key: k }
            assert.isUndefined(yield* reserve(scope, `f-${k}`), k)
            yield* complete(scope, { _tag: "Completed", fingerprint: `f-${k}`, response })
          }
          for (const k of keys) {
            const entry = yield* reserve({ orgId: "org_acme", key: k }, "again")
            assert.deepStrictEqual(entry, { _tag: "Completed", fingerprint: `f-${k}`, response }, k)
          }
        })
      )

      it.effect("25 concurrent reserves of one key: exactly one wins", () => race(fresh()))

      it.effect("25 concurrent reserves of a released key: exactly one wins", () =>
        Effect.gen(function* () {
          const scope = fresh()
          assert.isUndefined(yield* reserve(scope, "first"))
          yield* release(scope)
          yield* race(scope)
        })
      )
    })

    layer(options.layer({ retention: shortRetention }), { timeout: 30_000, excludeTestServices: true })((it) => {
      it.effect("an entry is forgotten once the retention has passed since it was last written", () =>
        Effect.gen(function* () {
          const inFlight = fresh()
          const completed = fresh()
          assert.isUndefined(yield* reserve(inFlight, "f"))
          assert.isUndefined(yield* reserve(completed, "f"))
          yield* wait(0.6)
          // Completing renews the entry: it now outlives the one left in flight.
          yield* complete(completed, { _tag: "Completed", fingerprint: "f", response })
          yield* wait(0.6)
          assert.isUndefined(yield* reserve(inFlight, "g"), "the in-flight entry should have expired")
          assert.deepStrictEqual(yield* reserve(completed, "g"), { _tag: "Completed", fingerprint: "f", response })
          yield* wait(0.6)
          assert.isUndefined(yield* reserve(completed, "g"), "the completed entry should have expired")
        })
      )

      it.effect("25 concurrent reserves of an expired key: exactly one wins", () =>
        Effect.gen(function* () {
          const scope = fresh()
          assert.isUndefined(yield* reserve(scope, "first"))
          yield* complete(scope, { _tag: "Completed", fingerprint: "first", response })
          yield* wait(1.3)
          yield* race(scope)
        })
      )
    })

    if (options.sharedByInstances) {
      it.live("two instances act as one: of 40 concurrent reserves across them, one wins; the other replays", () =>
        Effect.gen(function* () {
          const instance = Layer.build(options.layer({ retention: Duration.hours(1) })).pipe(
            Effect.map((context) => Context.get(context, IdempotencyStore))
          )
          const a = yield* instance
          const b = yield* instance
          const scope = fresh()
          const answers = yield* Effect.forEach(
            Array.from({ length: 40 }, (_, i) => i),
            (i) => (i % 2 === 0 ? a : b).reserve(scope, `f${i}`),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(answers.filter((answer) => answer === undefined).length, 1)
          const winner = answers.indexOf(undefined)
          const [first, other] = winner % 2 === 0 ? [a, b] : [b, a]
          yield* first.complete(scope, { _tag: "Completed", fingerprint: `f${winner}`, response })
          assert.deepStrictEqual(yield* other.reserve(scope, "x"), {
            _tag: "Completed",
            fingerprint: `f${winner}`,
            response
          })
        }).pipe(Effect.scoped)
      )
    }
  })
}
