// Cost of a presign (issue 33). On S3 (s3rver): `Attachments.presign` (decode, tenancy, a unique key,
// the signed URL, the attachment id) against the store's own signing, interleaved rounds, target
// ≤ 1.5x. On the local disk store, behind @mailroom/http in a server of its own: POST
// /attachments/presign against POST /emails to a provider that answers at once, on the same server,
// 16 connections, alternating rounds, target ≥ 0.9x the sends' requests per second.
import { type ChildProcess, spawn } from "node:child_process"
import { Attachments, ObjectStore } from "@mailroom/core"
import { S3ObjectStore } from "@mailroom/s3"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import * as S3rver from "../packages/s3/test/s3rver.ts"
import { compare, compareThroughput, ratioRows, throughputRows } from "./compare.ts"
import { load, stopChild } from "./servers.ts"

const onS3 = async (): Promise<ReadonlyArray<object>> => {
  const peer = ManagedRuntime.make(S3rver.S3rverPeer.layer)
  const s3rver = await peer.runPromise(Effect.service(S3rver.S3rverPeer))
  const store = S3ObjectStore.layer({
    bucket: S3rver.bucket,
    region: S3rver.region,
    endpoint: s3rver.endpoint,
    forcePathStyle: true,
    accessKeyId: S3rver.credentials.accessKeyId,
    secretAccessKey: Redacted.make(S3rver.credentials.secretAccessKey)
  })
  const runtime = ManagedRuntime.make(Layer.provideMerge(Attachments.layer({ idSecret: "bench" }), store))
  try {
    const { attachments, objects } = await runtime.runPromise(
      Effect.all({ attachments: Attachments.Attachments, objects: ObjectStore.ObjectStore })
    )
    const principal = { orgId: "org_acme", slug: "acme" }
    const request = { filename: "Relevé de compte.pdf", content_type: "application/pdf" }
    const key = "attachments/org_acme/1767225600000_0123456789abcdef0123-Relevé de compte.pdf"
    const contenders = [
      {
        name: "S3 store's presignPut alone",
        run: () => runtime.runPromise(objects.presignPut({ key, contentType: request.content_type, expiresIn: 3600 }))
      },
      {
        name: "Attachments.presign (S3 store on s3rver)",
        run: () => runtime.runPromise(attachments.presign(principal, request))
      }
    ]
    const rows = ratioRows(await compare(contenders, { rounds: 9, perRound: 1000, warmup: 2 }), contenders, [
      undefined,
      1.5
    ])
    // Nothing may have been written: an abandoned presign leaves no object behind.
    if (await s3rver.exists(key)) throw new Error("an object was written at presign")
    return rows
  } finally {
    await runtime.dispose()
    await peer.dispose()
  }
}

const startLocal = () =>
  new Promise<{ readonly url: string; readonly child: ChildProcess }>((resolve, reject) => {
    const child = spawn(process.execPath, [new URL("./http-server.ts", import.meta.url).pathname, "local"], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    child.stdout?.once("data", (data: Buffer) => resolve({ url: `http://127.0.0.1:${data.toString().trim()}`, child }))
    child.once("error", reject)
  })

const onLocal = async (): Promise<ReadonlyArray<object>> => {
  const server = await startLocal()
  try {
    const send = JSON.stringify({
      from: "billing@acme.example",
      to: ["alice@example.com"],
      subject: "Your receipt",
      body: { text: "Thanks.", html: "<p>Thanks.</p>" }
    })
    const presign = JSON.stringify({ filename: "report.pdf", content_type: "application/pdf" })
    const contenders = [
      {
        name: "POST /emails, a provider that answers at once (16 connections)",
        load: (seconds: number) => load(`${server.url}/emails`, send, 16, seconds)
      },
      {
        name: "POST /attachments/presign, the local disk store (16 connections)",
        load: (seconds: number) => load(`${server.url}/attachments/presign`, presign, 16, seconds)
      }
    ]
    return throughputRows(await compareThroughput(contenders, { rounds: 5, seconds: 2 }), contenders, [undefined, 0.9])
  } finally {
    await stopChild(server.child)
  }
}

export const run = async (): Promise<ReadonlyArray<object>> => [...(await onS3()), ...(await onLocal())]
