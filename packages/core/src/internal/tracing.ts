// Spans where a tracing backend can see them. With Effect's native tracer (none installed) a span is
// built, timed and dropped on every send, so it is skipped, as Effect's own HTTP server does.
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Tracer from "effect/Tracer"

/** `self` in a span when `fiber` has a tracer installed; `self` as it is otherwise. No stack trace. */
export const spanIn = <A, E, R>(
  fiber: Fiber.Fiber<unknown, unknown>,
  self: Effect.Effect<A, E, R>,
  name: string,
  options: Tracer.SpanOptionsNoTrace
): Effect.Effect<A, E, Exclude<R, Tracer.ParentSpan>> =>
  fiber.getRef(Tracer.Tracer) === Tracer.nativeTracer
    ? (self as Effect.Effect<A, E, Exclude<R, Tracer.ParentSpan>>)
    : // No source location: it would cost an Error (a stack trace) per call.
      Effect.withSpan(self, name, { ...options, captureStackTrace: false })

/** `Effect.withSpan` when a tracer is installed; the effect as it is otherwise. Spans carry no stack trace. */
export const withSpan =
  (name: string, options: Tracer.SpanOptionsNoTrace) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Tracer.ParentSpan>> =>
    Effect.withFiber((fiber) => spanIn(fiber, self, name, options))
