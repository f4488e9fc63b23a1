// Cost of one presigned upload URL: @mailroom/s3's presignPut (AWS's SigV4 signer used directly)
// against the SDK's plain getSignedUrl with the same bucket, key, content type and lifetime.
import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3"
import { getSignedUrl } from "@aws-sdk/s3-request-presigner"
import { ObjectStore } from "@mailroom/core"
import { S3ObjectStore } from "@mailroom/s3"
import { Effect, ManagedRuntime, Redacted } from "effect"
import { compare, ratioRows } from "./compare.ts"

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

  const contenders = [
    {
      name: "plain getSignedUrl(client, new PutObjectCommand(...))",
      run: () =>
        getSignedUrl(client, new PutObjectCommand({ Bucket: settings.bucket, Key: key, ContentType: contentType }), {
          expiresIn,
          // Without it the SDK's presigner leaves Content-Type unsigned: the same binding as the adapter's.
          signableHeaders: new Set(["content-type"])
        })
    },
    {
      name: "adapter presignPut (SignatureV4 direct)",
      run: () => Effect.runPromise(store.presignPut({ key, contentType, expiresIn }))
    }
  ]
  // The adapter signs with AWS's own SigV4 signer, skipping the SDK's middleware stack: never slower.
  const rows = ratioRows(await compare(contenders, { rounds: 7, perRound: 1000, warmup: 2 }), contenders, [
    undefined,
    1
  ])
  await runtime.dispose()
  client.destroy()
  return rows
}
