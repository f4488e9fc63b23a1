// Every option S3ObjectStore checks: a value it cannot use fails `layerConfig` and `layer` alike with
// Effect's ConfigError naming the option, when the store is made and before any request.
import { S3Client } from "@aws-sdk/client-s3"
import { assert, describe, it } from "@effect/vitest"
import { expectConfigError } from "@mailroom/core/testing"
import { withEnvironment, withoutAwsCredentials } from "@mailroom/test-support"
import { Config, ConfigProvider, Effect, Layer, Redacted } from "effect"
import { S3ObjectStore } from "../src/index.js"

const secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
const good = { bucket: "mailroom-attachments", region: "eu-west-3" }

const wrap = {
  bucket: Config.String("S3_BUCKET"),
  region: Config.String("S3_REGION"),
  endpoint: Config.String("S3_ENDPOINT").pipe(Config.withDefault(undefined)),
  accessKeyId: Config.String("S3_ACCESS_KEY_ID").pipe(Config.withDefault(undefined)),
  secretAccessKey: Config.Redacted("S3_SECRET_ACCESS_KEY").pipe(Config.withDefault(undefined))
} as const

const names = {
  bucket: "S3_BUCKET",
  region: "S3_REGION",
  endpoint: "S3_ENDPOINT",
  accessKeyId: "S3_ACCESS_KEY_ID",
  secretAccessKey: "S3_SECRET_ACCESS_KEY"
} as const

/**
 * The same options through `layerConfig` (read from a ConfigProvider) and through `layer`: both fail
 * with a ConfigError at `option` saying `says`, and neither message shows the secret.
 */
const refusedBoth = (option: string, says: RegExp, options: Partial<Record<keyof typeof names, string>>) =>
  Effect.gen(function* () {
    const values = Object.fromEntries(
      Object.entries({ ...good, ...options }).map(([name, value]) => [names[name as keyof typeof names], value])
    )
    const expected = { says, secrets: [secret] }
    const viaConfig = yield* expectConfigError(
      S3ObjectStore.layerConfig(wrap).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(values)))),
      option,
      expected
    )
    const { secretAccessKey, ...rest } = { ...good, ...options }
    const viaLayer = yield* expectConfigError(
      S3ObjectStore.layer({
        ...rest,
        ...(secretAccessKey === undefined ? {} : { secretAccessKey: Redacted.make(secretAccessKey) })
      }),
      option,
      expected
    )
    assert.strictEqual(viaConfig, viaLayer)
  })

describe("S3ObjectStore refuses options it cannot use, naming them", () => {
  it.effect("bucket: empty", () => refusedBoth("bucket", /must not be empty/, { bucket: " " }))

  it.effect("region: empty, or not a region name", () =>
    Effect.gen(function* () {
      for (const region of [" ", "eu west 3", "eu-west-3/"]) {
        yield* refusedBoth("region", /must be a region name such as eu-west-3/, { region })
      }
    })
  )

  it.effect("endpoint: not an http(s) URL", () =>
    Effect.gen(function* () {
      for (const endpoint of ["localhost:9000", "ftp://127.0.0.1:9000", "http://", "minio"]) {
        yield* refusedBoth("endpoint", /must be an http\(s\) URL/, { endpoint })
      }
    })
  )

  it.effect("accessKeyId and secretAccessKey: one without the other, or empty", () =>
    Effect.gen(function* () {
      yield* refusedBoth("secretAccessKey", /must be given with accessKeyId/, { accessKeyId: "AKIDEXAMPLE" })
      yield* refusedBoth("accessKeyId", /must be given with secretAccessKey/, { secretAccessKey: secret })
      yield* refusedBoth("accessKeyId", /must not be empty/, { accessKeyId: " ", secretAccessKey: secret })
      yield* refusedBoth("secretAccessKey", /must not be empty/, { accessKeyId: "AKIDEXAMPLE", secretAccessKey: " " })
    })
  )

  it.effect("accessKeyId: none given and none in the SDK's chain (environment, profiles)", () =>
    withoutAwsCredentials(
      refusedBoth("accessKeyId", /no AWS credentials were found: .*AWS_ACCESS_KEY_ID/, {
        endpoint: "http://127.0.0.1:9000"
      })
    )
  )

  it.effect("client: an S3Client with no region (none given, none in the environment)", () =>
    withEnvironment(
      {
        set: {
          AWS_REGION: undefined,
          AWS_DEFAULT_REGION: undefined,
          AWS_CONFIG_FILE: "/nonexistent/mailroom-test/config"
        }
      },
      Effect.gen(function* () {
        const client = new S3Client({ credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: secret } })
        yield* Effect.addFinalizer(() => Effect.sync(() => client.destroy()))
        yield* expectConfigError(S3ObjectStore.layer({ bucket: good.bucket, client }), "client", {
          says: /must be an S3Client with a region/
        })
      }).pipe(Effect.scoped)
    )
  )
})
