// Starts a test file's peers at once. With `Promise.all`, a peer that fails to start left the others
// running; here the ones that started are stopped before the failure is thrown.

/** A peer for `startAll`: how to start it, and how to stop it once started. */
export interface Starter<A> {
  readonly start: () => Promise<A>
  readonly stop: (started: A) => unknown
}

/**
 * Starts every peer concurrently and answers them in order. When one fails, the peers that did start
 * are stopped (their own failures to stop ignored) and the first failure is thrown.
 */
export const startAll = async <const T extends ReadonlyArray<unknown>>(
  starters: {
    readonly [K in keyof T]: Starter<T[K]>
  }
): Promise<T> => {
  const all = starters as ReadonlyArray<Starter<unknown>>
  const settled = await Promise.allSettled(all.map((starter) => starter.start()))
  const failure = settled.find((result) => result.status === "rejected")
  if (failure === undefined) {
    return settled.map((result) => (result as PromiseFulfilledResult<unknown>).value) as unknown as T
  }
  await Promise.allSettled(
    settled.map(async (result, i) => {
      if (result.status === "fulfilled") await all[i]?.stop(result.value)
    })
  )
  throw failure.reason
}
