// Cost of one presigned upload URL: @mailroom/s3's presignPut (AWS's SigV4 signer used directly)
// against the SDK's plain getSignedUrl with the same bucket, key, content type and lifetime.
import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3"
import { getSignedUrl } from "@aws-sdk/s3-request-presigner"
import { ObjectStore } from "@mailroom/core"
import { S3ObjectStore } from "@mailroom/s3"
import { Effect, ManagedRuntime, Redacted } from "effect"
import { Bench } from "tinybench"

export const run = async (): Promise<ReadonlyArray<object>> => {
  // No request leaves the process: presigning is local, so AWS's real endpoint is fine here.
  const settings = { bucket: "mailroom-attachments", region: "eu-west-3" }
  const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" }
  const runtime = ManagedRuntime.make(
    S3ObjectStore.layer({
      ...settings,
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: Redacted.make(credentials.secretAccessKey)
    })
  )
  const store = await runtime.runPromise(
    Effect.gen(function* () {
      return yield* ObjectStore.ObjectStore
    })
  )
  const client = new S3Client({ region: settings.region, credentials, requestChecksumCalculation: "WHEN_REQUIRED" })
  const key = "attachments/org_acme/1767225600000-Relevé de compte.pdf"
  const contentType = "application/pdf"
  const expiresIn = 3600

  const adapter = "adapter presignPut (SignatureV4 direct)"
  const plain = "plain getSignedUrl(client, new PutObjectCommand(...))"
  const bench = new Bench({ time: 1000, warmup: true })
  bench
    .add(adapter, () => Effect.runPromise(store.presignPut({ key, contentType, expiresIn })))
    .add(plain, () =>
      getSignedUrl(client, new PutObjectCommand({ Bucket: settings.bucket, Key: key, ContentType: contentType }), {
        expiresIn,
        // Without it the SDK's presigner leaves Content-Type unsigned: the same binding as the adapter's.
        signableHeaders: new Set(["content-type"])
      })
    )
  await bench.run()
  await runtime.dispose()
  client.destroy()

  const meanMs = (name: string) => {
    const result = bench.tasks.find((task) => task.name === name)?.result as { latency?: { mean: number } } | undefined
    return result?.latency?.mean ?? Number.NaN
  }
  const rows: Array<object> = bench.tasks.map((task) => {
    const result = task.result as { throughput?: { mean: number }; latency?: { mean: number } } | undefined
    return {
      name: task.name,
      "ops/s": Math.round(result?.throughput?.mean ?? 0),
      "mean µs": Number(((result?.latency?.mean ?? 0) * 1000).toFixed(1))
    }
  })
  rows.push({ name: "speedup (getSignedUrl / adapter)", ratio: `${(meanMs(plain) / meanMs(adapter)).toFixed(1)}x` })
  return rows
}
