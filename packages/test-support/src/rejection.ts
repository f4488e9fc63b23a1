// What a promise rejected with, for tests that check an error's class and fields: one helper instead of
// a copy per test file.

/** Resolves to what `promise` rejected with; rejects, failing the test, when it resolved instead. */
export const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
  let value: unknown
  try {
    value = await promise
  } catch (error) {
    return error
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(value)}`)
}
