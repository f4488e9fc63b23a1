// Cost of a presign through core: `Attachments.presign` (decode, tenancy, a unique key, the signed URL,
// the attachment id) on the S3 store pointed at s3rver, against the adapter's signing alone. Presign
// makes no storage round trip, so the target is within 2x of the signature.
import { Attachments, ObjectStore } from "@mailroom/core"
import { S3ObjectStore } from "@mailroom/s3"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { Bench } from "tinybench"
import * as S3rver from "../packages/s3/test/s3rver.ts"

export const run = async (): Promise<ReadonlyArray<object>> => {
  const peer = ManagedRuntime.make(S3rver.S3rverPeer.layer)
  const s3rver = await peer.runPromise(Effect.service(S3rver.S3rverPeer))
  const { endpoint } = s3rver
  const store = S3ObjectStore.layer({
    bucket: S3rver.bucket,
    region: S3rver.region,
    endpoint,
    forcePathStyle: true,
    accessKeyId: S3rver.credentials.accessKeyId,
    secretAccessKey: Redacted.make(S3rver.credentials.secretAccessKey)
  })
  const runtime = ManagedRuntime.make(Layer.provideMerge(Attachments.layer({ idSecret: "bench" }), store))
  const { attachments, objects } = await runtime.runPromise(
    Effect.gen(function* () {
      return { attachments: yield* Attachments.Attachments, objects: yield* ObjectStore.ObjectStore }
    })
  )
  const principal = { orgId: "org_acme", slug: "acme" }
  const request = { filename: "Relevé de compte.pdf", content_type: "application/pdf" }
  const key = "attachments/org_acme/1767225600000_0123456789abcdef0123-Relevé de compte.pdf"

  const signing = "adapter presignPut alone"
  const presign = "Attachments.presign (S3 store on s3rver)"
  const bench = new Bench({ time: 1000, warmup: true })
  bench
    .add(signing, () =>
      Effect.runPromise(objects.presignPut({ key, contentType: request.content_type, expiresIn: 3600 }))
    )
    .add(presign, () => Effect.runPromise(attachments.presign(principal, request)))
  await bench.run()
  // Nothing may have been written: an abandoned presign leaves no object behind.
  const leftover = await s3rver.exists(key)
  await runtime.dispose()
  await peer.dispose()

  const meanMs = (name: string) =>
    (bench.tasks.find((task) => task.name === name)?.result as { latency?: { mean: number } } | undefined)?.latency
      ?.mean ?? Number.NaN
  const rows: Array<object> = bench.tasks.map((task) => ({
    name: task.name,
    "ops/s": Math.round((task.result as { throughput?: { mean: number } } | undefined)?.throughput?.mean ?? 0),
    "mean µs": Number((meanMs(task.name) * 1000).toFixed(1))
  }))
  const ratio = meanMs(presign) / meanMs(signing)
  rows.push({
    name: "Attachments.presign / presignPut (target ≤ 2x)",
    ratio: `${ratio.toFixed(2)}x ${ratio <= 2 ? "met" : "MISSED"}`,
    ...(leftover ? { note: "an object was written at presign" } : {})
  })
  return rows
}
