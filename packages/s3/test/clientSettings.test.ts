// Presigned URLs from an injected S3Client follow its endpoint settings exactly as the SDK's own
// getSignedUrl does (FIPS, dual-stack, accelerate, path style, custom endpoints), or are refused.
import { GetObjectCommand, PutObjectCommand, S3Client, type S3ClientConfig } from "@aws-sdk/client-s3"
import { getSignedUrl } from "@aws-sdk/s3-request-presigner"
import { assert, describe, it } from "@effect/vitest"
import { expectConfigError } from "@mailroom/core/testing"
import { Effect, Exit } from "effect"
import { TestClock } from "effect/testing"
import { S3ObjectStore } from "../src/index.js"
import { refusal } from "./sigv4.js"

const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" }
const key = "attachments/org_acme/1767225600000-Relevé août (v2).pdf"
const encodedKey = "attachments/org_acme/1767225600000-Relev%C3%A9%20ao%C3%BBt%20%28v2%29.pdf"
const bucket = "mailroom-attachments"
const now = Date.parse("2026-01-01T09:30:00Z")

// Checksums only when required: otherwise getSignedUrl binds `x-amz-checksum-mode=ENABLED` into a
// GET URL, a response checksum the adapter's URLs do not ask for.
const clientWith = (settings: S3ClientConfig) =>
  Effect.acquireRelease(
    Effect.sync(
      () =>
        new S3Client({
          region: "eu-west-3",
          credentials,
          requestChecksumCalculation: "WHEN_REQUIRED",
          responseChecksumValidation: "WHEN_REQUIRED",
          ...settings
        })
    ),
    (client) => Effect.sync(() => client.destroy())
  )

interface Stack {
  readonly add: (
    middleware: (next: (args: Args) => Promise<unknown>) => (args: Args) => Promise<unknown>,
    options: { readonly step: "build" }
  ) => void
}
interface Args {
  readonly request: { readonly query: Record<string, unknown> }
}

// getSignedUrl adds the SDK's `x-id=GetObject` operation marker to the signed query, which the
// adapter's URLs do not carry; without it, and signing Content-Type as the adapter does, the two
// presigners must agree to the last byte, signature included, but for the order of the query
// parameters (the SDK sorts them; S3 does not care).
const withoutOperationMarker = <C extends { readonly middlewareStack: object }>(command: C): C => {
  ;(command.middlewareStack as unknown as Stack).add(
    (next) => (args) => {
      delete args.request.query["x-id"]
      return next(args)
    },
    { step: "build" }
  )
  return command
}

// The adapter's signing date (its Clock), and Content-Type bound as the adapter binds it.
const signing = (expiresIn: number) => ({
  expiresIn,
  signingDate: new Date(now),
  signableHeaders: new Set(["content-type"])
})

const inParts = (url: string) => {
  const [beforeQuery = "", query = ""] = url.split("?")
  return { beforeQuery, parameters: query.split("&").sort() }
}

const cases: ReadonlyArray<{ readonly name: string; readonly settings: S3ClientConfig; readonly expected: string }> = [
  { name: "no endpoint settings (regional)", settings: {}, expected: `https://${bucket}.s3.eu-west-3.amazonaws.com` },
  {
    name: "useFipsEndpoint",
    settings: { region: "us-east-2", useFipsEndpoint: true },
    expected: `https://${bucket}.s3-fips.us-east-2.amazonaws.com`
  },
  {
    name: "useDualstackEndpoint",
    settings: { useDualstackEndpoint: true },
    expected: `https://${bucket}.s3.dualstack.eu-west-3.amazonaws.com`
  },
  {
    name: "useAccelerateEndpoint",
    settings: { useAccelerateEndpoint: true },
    expected: `https://${bucket}.s3-accelerate.amazonaws.com`
  },
  {
    name: "useFipsEndpoint with useDualstackEndpoint",
    settings: { region: "us-east-2", useFipsEndpoint: true, useDualstackEndpoint: true },
    expected: `https://${bucket}.s3-fips.dualstack.us-east-2.amazonaws.com`
  },
  {
    name: "useAccelerateEndpoint with useDualstackEndpoint",
    settings: { useAccelerateEndpoint: true, useDualstackEndpoint: true },
    expected: `https://${bucket}.s3-accelerate.dualstack.amazonaws.com`
  },
  {
    name: "forcePathStyle",
    settings: { forcePathStyle: true },
    expected: `https://s3.eu-west-3.amazonaws.com/${bucket}`
  },
  {
    name: "forcePathStyle with useFipsEndpoint",
    settings: { region: "us-east-2", forcePathStyle: true, useFipsEndpoint: true },
    expected: `https://s3-fips.us-east-2.amazonaws.com/${bucket}`
  },
  {
    name: "a custom endpoint with a port and a path prefix, path style",
    settings: { region: "us-east-1", endpoint: "http://storage.example.com:9000/minio/", forcePathStyle: true },
    expected: `http://storage.example.com:9000/minio/${bucket}`
  },
  {
    name: "a custom endpoint, virtual-hosted",
    settings: { region: "auto", endpoint: "https://0123456789abcdef.r2.cloudflarestorage.com" },
    expected: `https://${bucket}.0123456789abcdef.r2.cloudflarestorage.com`
  },
  {
    name: "useGlobalEndpoint in us-east-1",
    settings: { region: "us-east-1", useGlobalEndpoint: true },
    expected: `https://${bucket}.s3.amazonaws.com`
  }
]

describe("S3ObjectStore presigned URLs follow the injected S3Client's endpoint settings", () => {
  for (const { name, settings, expected } of cases) {
    it.effect(`${name}: the same URLs as getSignedUrl, signature included`, () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(now)
        const client = yield* clientWith(settings)
        const store = yield* S3ObjectStore.make({ bucket, client })
        const put = yield* store.presignPut({ key, contentType: "application/pdf", expiresIn: 3600 })
        const get = yield* store.presignGet({ key, expiresIn: 900 })

        assert.strictEqual(inParts(put).beforeQuery, `${expected}/${encodedKey}`)
        const sdkPut = yield* Effect.promise(() =>
          getSignedUrl(
            client,
            withoutOperationMarker(new PutObjectCommand({ Bucket: bucket, Key: key, ContentType: "application/pdf" })),
            signing(3600)
          )
        )
        assert.deepStrictEqual(inParts(put), inParts(sdkPut))
        const sdkGet = yield* Effect.promise(() =>
          getSignedUrl(client, withoutOperationMarker(new GetObjectCommand({ Bucket: bucket, Key: key })), signing(900))
        )
        assert.deepStrictEqual(inParts(get), inParts(sdkGet))

        // And an independent SigV4 check accepts them for the host they name.
        const secretAccessKey = credentials.secretAccessKey
        const headers = { "content-type": "application/pdf" }
        assert.isUndefined(refusal({ url: put, method: "PUT", headers, secretAccessKey, now }))
        assert.isUndefined(refusal({ url: get, method: "GET", secretAccessKey, now }))
      })
    )
  }

  const refused: ReadonlyArray<{
    readonly name: string
    readonly settings: S3ClientConfig
    readonly bucket?: string
    readonly names: ReadonlyArray<string>
  }> = [
    {
      name: "useAccelerateEndpoint with forcePathStyle",
      settings: { useAccelerateEndpoint: true, forcePathStyle: true },
      names: ["useAccelerateEndpoint: true", "forcePathStyle: true", "Path-style addressing cannot be used"]
    },
    {
      name: "useAccelerateEndpoint with a custom endpoint",
      settings: { useAccelerateEndpoint: true, endpoint: "https://storage.example.com" },
      names: ["useAccelerateEndpoint: true", "endpoint: https://storage.example.com/"]
    },
    {
      name: "useAccelerateEndpoint with useFipsEndpoint",
      settings: { region: "us-east-2", useAccelerateEndpoint: true, useFipsEndpoint: true },
      names: ["useAccelerateEndpoint: true", "useFipsEndpoint: true"]
    },
    {
      name: "useFipsEndpoint with a custom endpoint",
      settings: { region: "us-east-2", useFipsEndpoint: true, endpoint: "https://storage.example.com" },
      names: ["useFipsEndpoint: true", "endpoint: https://storage.example.com/"]
    },
    {
      name: "useAccelerateEndpoint with a bucket name that is not a DNS label",
      settings: { useAccelerateEndpoint: true },
      bucket: "attachments.example.com",
      names: ["useAccelerateEndpoint: true", '"attachments.example.com"', "dots or capitals"]
    }
  ]

  for (const { name, settings, bucket: refusedBucket = bucket, names } of refused) {
    it.effect(`${name}: refused when the store is made, as getSignedUrl refuses it`, () =>
      Effect.gen(function* () {
        const client = yield* clientWith(settings)
        const exit = yield* Effect.exit(S3ObjectStore.make({ bucket: refusedBucket, client }))
        assert.isTrue(Exit.isFailure(exit))
        for (const name of names) assert.include(String(exit), name)
        const sdk = yield* Effect.exit(
          Effect.tryPromise(() => getSignedUrl(client, new GetObjectCommand({ Bucket: refusedBucket, Key: key })))
        )
        assert.isTrue(Exit.isFailure(sdk), "the SDK refuses these settings too")
      })
    )
  }

  it.effect("a bucket whose URLs need other than SigV4 is refused when the store is made", () =>
    Effect.gen(function* () {
      const client = yield* clientWith({})
      // The SDK signs these with S3 Express session credentials or SigV4a, neither of which the
      // adapter's signer does: a URL it signed would be refused.
      for (const [directoryBucket, what] of [
        ["mailroom--euw3-az1--x-s3", "S3 Express One Zone directory bucket"],
        ["arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap", "Multi-Region Access Point"]
      ] as const) {
        // A ConfigError naming the bucket, the option to change: no client setting makes these presignable.
        yield* expectConfigError(S3ObjectStore.make({ bucket: directoryBucket, client }), "bucket", {
          says: new RegExp(what)
        })
      }
    })
  )

  it.effect("making the store leaves the client's middleware stack as it was", () =>
    Effect.gen(function* () {
      const client = yield* clientWith({ useDualstackEndpoint: true })
      const before = client.middlewareStack.identify()
      yield* S3ObjectStore.make({ bucket, client })
      assert.deepStrictEqual(client.middlewareStack.identify(), before)
    })
  )
})
