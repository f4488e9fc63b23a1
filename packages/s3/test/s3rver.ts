// @20minutes/s3rver started in-process for the tests: an S3 that checks SigV4 signatures, on
// 127.0.0.1 with a free port, keeping its objects in a fresh temporary directory removed afterwards.
import { mkdtemp, rm } from "node:fs/promises"
import { createRequire } from "node:module"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { HeadObjectCommand, S3Client } from "@aws-sdk/client-s3"
import { Context, Effect, Layer, type Scope } from "effect"

interface S3rverServer {
  run(): Promise<AddressInfo>
  close(): Promise<void>
}
type S3rverConstructor = new (options: {
  readonly address: string
  readonly port: number
  readonly silent: boolean
  readonly directory: string
  readonly configureBuckets: ReadonlyArray<{ readonly name: string }>
  readonly allowMismatchedSignatures?: boolean
}) => S3rverServer

// The package ships CommonJS without type declarations.
const S3rver = createRequire(import.meta.url)("@20minutes/s3rver") as S3rverConstructor

export const bucket = "mailroom-attachments"
/** The one account s3rver knows; any other key or secret fails its signature check. */
export const credentials = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } as const
export const region = "us-east-1"

/** An S3 server the tests run against: s3rver here, or radosgw (support/radosgw.ts). */
/** Whether an object is stored, asked with the SDK directly (HeadObject), not through the adapter. */
export const existsIn =
  (client: S3Client, bucket: string) =>
  (key: string): Promise<boolean> =>
    client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
      () => true,
      (error: { readonly name?: string }) => {
        if (error.name === "NotFound") return false
        throw error
      }
    )

export interface Peer {
  readonly name: string
  readonly endpoint: string
  readonly bucket: string
  readonly region: string
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string }
  /** Whether an object is stored, asked with the SDK directly, without the adapter under test. */
  readonly exists: (key: string) => Promise<boolean>
}

export const start = (
  options: { readonly allowMismatchedSignatures?: boolean } = {}
): Effect.Effect<Peer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const directory = yield* Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "mailroom-s3rver-"))),
      (directory) => Effect.promise(() => rm(directory, { recursive: true, force: true }))
    )
    const server = new S3rver({
      address: "127.0.0.1",
      port: 0,
      silent: true,
      directory,
      configureBuckets: [{ name: bucket }],
      allowMismatchedSignatures: options.allowMismatchedSignatures ?? false
    })
    const { port } = yield* Effect.acquireRelease(
      Effect.promise(() => server.run()),
      () => Effect.promise(() => server.close())
    )
    const endpoint = `http://127.0.0.1:${port}`
    const client = yield* Effect.acquireRelease(
      // A copy: the SDK marks the credentials it is given (a `$source` field), and these are exported.
      Effect.sync(() => new S3Client({ region, endpoint, forcePathStyle: true, credentials: { ...credentials } })),
      (client) => Effect.sync(() => client.destroy())
    )
    return {
      name: "s3rver",
      endpoint,
      bucket,
      region,
      credentials,
      exists: existsIn(client, bucket)
    }
  })

export class S3rverPeer extends Context.Service<S3rverPeer, Peer>()("test/S3rverPeer") {
  static readonly layer: Layer.Layer<S3rverPeer> = Layer.effect(S3rverPeer, start())
}
