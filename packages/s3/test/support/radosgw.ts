// Ceph's radosgw as the tests' strict S3 peer: one cluster per test run, started by the first test
// file that asks for it (through the run's global setup, radosgwSetup.ts) and stopped when the run ends.
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3"
import { Effect, type Scope } from "effect"
import { inject } from "vitest"
import { existsIn, type Peer } from "../s3rver.js"
import { credentials, region } from "./radosgwCluster.js"

export { credentials, region }

declare module "vitest" {
  export interface ProvidedContext {
    /** Where test files ask the run's global setup for the cluster's endpoint (see radosgwSetup.ts). */
    radosgw: string
  }
}

/** The endpoint of the run's cluster, started by whichever test file asks first. */
export const endpoint = async (): Promise<string> => {
  const control = inject("radosgw")
  if (control === undefined)
    throw new Error("radosgw is started by the global setup of the repository's vitest.config.ts")
  const response = await fetch(control)
  const text = await response.text()
  if (!response.ok) throw new Error(text)
  return text
}

/**
 * The run's radosgw with `bucket` created (each test file its own, so none sees another's objects),
 * and a client outside the adapter under test to check what is stored.
 */
export const start = (bucket: string): Effect.Effect<Peer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const url = yield* Effect.promise(() => endpoint())
    const client = yield* Effect.acquireRelease(
      // A copy: the SDK marks the credentials it is given (a `$source` field), and these are exported.
      Effect.sync(() => new S3Client({ region, endpoint: url, forcePathStyle: true, credentials: { ...credentials } })),
      (client) => Effect.sync(() => client.destroy())
    )
    yield* Effect.promise(() =>
      client.send(new CreateBucketCommand({ Bucket: bucket })).catch((error: { readonly name?: string }) => {
        if (error.name !== "BucketAlreadyOwnedByYou") throw error
      })
    )
    return {
      name: "radosgw",
      endpoint: url,
      bucket,
      region,
      credentials,
      exists: existsIn(client, bucket)
    }
  })
