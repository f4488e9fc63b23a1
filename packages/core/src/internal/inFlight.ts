// The calls running on a ManagedRuntime, for a host's dispose: disposing interrupts every fiber the
// runtime started, so a send in flight would end with neither its answer nor a typed error.
import { Unavailable } from "../MailroomError.js"

/** Tracks the calls running; `drain` stops new ones (`isClosing`) and waits for those running. */
export const inFlight = () => {
  const running = new Set<Promise<unknown>>()
  let closing = false
  return {
    isClosing: () => closing,
    track: <A>(promise: Promise<A>): Promise<A> => {
      running.add(promise)
      const forget = () => running.delete(promise)
      promise.then(forget, forget)
      return promise
    },
    drain: async () => {
      closing = true
      while (running.size > 0) await Promise.allSettled(running)
    }
  }
}

/** What a call made once `dispose` was called fails with: a 503 over HTTP, nothing done. */
export const disposing = () =>
  new Unavailable({ message: "mailroom is shutting down (dispose was called); nothing was done" })
