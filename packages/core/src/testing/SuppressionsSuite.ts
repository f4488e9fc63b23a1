// The conformance suite every Suppressions store runs against its real database: addresses compared
// as the send path compares them, first reason kept, lists and cursors, one organisation at a time.
import { randomUUID } from "node:crypto"
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { isValidationError } from "../MailroomError.js"
import { type NewSuppression, Suppressions } from "../Suppressions.js"

export interface SuppressionsSuiteOptions {
  /** Builds the store. Entries of a shared database may outlive a run: the suite uses fresh organisations. */
  readonly layer: Layer.Layer<Suppressions, unknown>
}

export const SuppressionsSuite = (name: string, options: SuppressionsSuiteOptions): void => {
  const fresh = () => `org_${randomUUID()}`
  const add = (org: string, entries: ReadonlyArray<NewSuppression>, now = new Date().toISOString()) =>
    Effect.flatMap(Suppressions, (s) => s.add(org, entries, now))
  const check = (org: string, emails: ReadonlyArray<string>) =>
    Effect.flatMap(Suppressions, (s) => s.check(org, emails))
  const emails = (found: ReadonlyArray<{ readonly email: string }>) => found.map((s) => s.email).sort()

  describe(`SuppressionsSuite: ${name}`, () => {
    layer(options.layer, { timeout: 60_000, excludeTestServices: true })((it) => {
      it.effect("an address is suppressed as the send path compares it: domain without case, local part as given", () =>
        Effect.gen(function* () {
          const org = fresh()
          const added = yield* add(org, [
            { email: "Bob@Bücher.Example", reason: "bounced", messageId: "m-1", detail: "5.1.1 no such user" }
          ])
          assert.strictEqual(added.length, 1)
          assert.deepStrictEqual(added[0], {
            email: "Bob@xn--bcher-kva.example",
            reason: "bounced",
            created_at: added[0]?.created_at ?? "",
            message_id: "m-1",
            detail: "5.1.1 no such user"
          })
          assert.deepStrictEqual(emails(yield* check(org, ["Bob@xn--BCHER-kva.example", "bob@bücher.example"])), [
            "Bob@xn--bcher-kva.example"
          ])
          assert.deepStrictEqual(yield* check(fresh(), ["Bob@bücher.example"]), [], "another organisation's list")
        })
      )

      it.effect("adding an address again keeps its first reason; only new ones are answered", () =>
        Effect.gen(function* () {
          const org = fresh()
          yield* add(org, [{ email: "a@example.com", reason: "complained" }])
          const again = yield* add(org, [
            { email: "a@EXAMPLE.com", reason: "manual" },
            { email: "b@example.com", reason: "manual" }
          ])
          assert.deepStrictEqual(emails(again), ["b@example.com"])
          const found = yield* check(org, ["a@example.com"])
          assert.strictEqual(found[0]?.reason, "complained")
          const racing = yield* Effect.forEach(
            Array.from({ length: 20 }, () => "race@example.com"),
            (email) => add(org, [{ email, reason: "bounced" }]),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(racing.flat().length, 1, "of concurrent adds of one address, one adds it")
        })
      )

      it.effect("remove answers whether the address was suppressed, and frees it", () =>
        Effect.gen(function* () {
          const org = fresh()
          yield* add(org, [{ email: "a@example.com", reason: "manual" }])
          const remove = (email: string) => Effect.flatMap(Suppressions, (s) => s.remove(org, email))
          assert.isFalse(yield* Effect.flatMap(Suppressions, (s) => s.remove(fresh(), "a@example.com")))
          assert.isTrue(yield* remove("a@Example.com"))
          assert.isFalse(yield* remove("a@example.com"))
          assert.deepStrictEqual(yield* check(org, ["a@example.com"]), [])
        })
      )

      it.effect("a list is newest first, page by page, filtered by reason; a foreign cursor is refused", () =>
        Effect.gen(function* () {
          const org = fresh()
          for (let i = 0; i < 12; i++) {
            const when = new Date(Date.UTC(2026, 0, 1, 0, 0, i % 6)).toISOString()
            yield* add(
              org,
              [{ email: `u${String(i).padStart(2, "0")}@example.com`, reason: i % 3 === 0 ? "bounced" : "manual" }],
              when
            )
          }
          const list = (query: Parameters<Suppressions["list"]>[1]) =>
            Effect.flatMap(Suppressions, (s) => s.list(org, query))
          const seen: Array<string> = []
          let cursor: string | undefined
          do {
            const page = yield* list({ limit: 5, ...(cursor === undefined ? {} : { cursor }) })
            seen.push(...page.data.map((s) => `${s.created_at} ${s.email}`))
            cursor = page.next_cursor ?? undefined
          } while (cursor !== undefined)
          assert.strictEqual(seen.length, 12)
          assert.deepStrictEqual(seen, [...seen].sort().reverse(), "newest first, then by address")
          const bounced = yield* list({ limit: 100, reason: "bounced" })
          assert.deepStrictEqual(emails(bounced.data), [
            "u00@example.com",
            "u03@example.com",
            "u06@example.com",
            "u09@example.com"
          ])
          const error = yield* Effect.flip(list({ limit: 5, cursor: "nope" }))
          assert.isTrue(isValidationError(error))
          // A NUL, which PostgreSQL refuses in text: a bad cursor, never an outage.
          const crafted = Buffer.from(JSON.stringify(["\u0000", "\u0000"])).toString("base64url")
          assert.isTrue(isValidationError(yield* Effect.flip(list({ limit: 5, cursor: crafted }))))
        })
      )
    })
  })
}
