// The one scaffolding of core's errors: a tagged error whose `reason` says what happened and whether
// trying again can help, told apart from any copy of the package by a shared symbol. See CONTRIBUTING.
import type * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import type * as Pipeable from "effect/Pipeable"
import type * as Types from "effect/Types"

/** What every reason has: a message safe to show a caller, and whether trying again can help. */
export interface ReasonLike {
  readonly _tag: string
  readonly message: string
  readonly isRetryable: boolean
}

/** The fields a constructor takes: every field of `A` but `_tag`, as Effect's `Data` classes take them. */
type Fields<A> = Types.VoidIfEmpty<{ readonly [P in keyof A as P extends "_tag" ? never : P]: A[P] }>

/**
 * The base of a reason: `class RateLimited extends TaggedReason("RateLimited", true)<{ message, retryAfter? }>`.
 * `isRetryable` may be decided from the reason's fields: `TaggedReason("Unavailable", (r) => !r.possiblySent)`.
 */
export const TaggedReason = <const Tag extends string>(
  tag: Tag,
  isRetryable: boolean | ((fields: { readonly [field: string]: unknown }) => boolean)
): (new <A extends { readonly message: string }>(
  args: Fields<A>
) => Readonly<A> & { readonly _tag: Tag; readonly isRetryable: boolean } & Pipeable.Pipeable) => {
  class Base extends Data.TaggedClass(tag)<{ readonly message: string }> {
    get isRetryable(): boolean {
      return typeof isRetryable === "boolean" ? isRetryable : isRetryable(this as unknown as Record<string, unknown>)
    }
  }
  return Base as never
}

/** The symbol that marks an error of `tag` in any copy of this package (`Symbol.for`, so shared across copies). */
export const typeIdOf = (tag: string): symbol => Symbol.for(`@mailroom/core/${tag}`)

/** Marks the instances of `error` as errors of `tag`, for `guard(tag)` (on the prototype: nothing to compare). */
export const mark = (error: abstract new (...args: never) => unknown, tag: string): void => {
  Object.defineProperty(error.prototype, typeIdOf(tag), { value: typeIdOf(tag) })
}

/**
 * The base of an error with a `reason`: `class ObjectStoreError extends ReasonError("ObjectStoreError")<{
 * store, reason, cause? }>`. Its `message` and `isRetryable` are the reason's, and it carries
 * `typeIdOf(tag)`, which `guard(tag)` looks for.
 */
export const ReasonError = <const Tag extends string>(
  tag: Tag
): (new <A extends { readonly reason: ReasonLike }>(
  args: Fields<A>
) => Cause.YieldableError & { readonly _tag: Tag; readonly isRetryable: boolean } & Readonly<A>) => {
  class Base extends Data.TaggedError(tag)<{ readonly reason: ReasonLike }> {
    override get message(): string {
      return this.reason.message
    }

    get isRetryable(): boolean {
      return this.reason.isRetryable
    }
  }
  mark(Base, tag)
  return Base as never
}

/** True for an error marked `tag`, from any copy of this package: safer than `instanceof` across duplicates. */
export const guard =
  <E>(tag: string) =>
  (u: unknown): u is E =>
    typeof u === "object" && u !== null && typeIdOf(tag) in u

/**
 * A reason of `tag` from its message, as sources and stores build their failures: `reasons` maps each
 * tag to its class.
 */
export const reasonOf =
  <Reasons extends Record<string, new (args: { readonly message: string }) => ReasonLike>>(reasons: Reasons) =>
  <Tag extends keyof Reasons & string>(tag: Tag, message: string): InstanceType<Reasons[Tag]> =>
    new (reasons[tag] as Reasons[Tag])({ message }) as InstanceType<Reasons[Tag]>
