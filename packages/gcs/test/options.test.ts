// Every option GcsObjectStore checks: a value it cannot use fails `layerConfig` and `layer` alike with
// Effect's ConfigError naming the option, when the store is made and before any request.
import { generateKeyPairSync } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { expectConfigError } from "@mailroom/core/testing"
import { withEnvironment } from "@mailroom/test-support"
import { Config, ConfigProvider, Effect, Layer, Redacted } from "effect"
import { GcsObjectStore } from "../src/index.js"
import { makeServiceAccount } from "./support/keys.js"

const dir = mkdtempSync(join(tmpdir(), "mailroom-gcs-options-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const file = (name: string, content: unknown) => {
  const path = join(dir, name)
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content))
  return path
}

const account = makeServiceAccount()
const pem = Redacted.value(account.credentials.private_key)
const bucket = "mailroom-attachments"

/** Runs `effect` with Google's default chain empty: no variable, no gcloud directory, no home directory. */
const withoutDefaultCredentials = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  withEnvironment(
    {
      set: { GOOGLE_APPLICATION_CREDENTIALS: undefined, HOME: join(dir, "home"), CLOUDSDK_CONFIG: join(dir, "gcloud") }
    },
    effect
  )

/**
 * The same bad value through `layerConfig` (read from a ConfigProvider) and through `layer`: both fail
 * with a ConfigError at `option` saying `says`, and neither message shows `secret`.
 */
const refusedBoth = (
  option: ReadonlyArray<string>,
  says: RegExp,
  config: { readonly wrap: Config.Wrap<GcsObjectStore.ConfigOptions>; readonly values: Record<string, unknown> },
  options: GcsObjectStore.Options,
  secret?: string
) =>
  Effect.gen(function* () {
    const expected = { says, secrets: secret === undefined ? [] : [secret] }
    const viaConfig = yield* expectConfigError(
      GcsObjectStore.layerConfig(config.wrap).pipe(
        Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(config.values)))
      ),
      option,
      expected
    )
    const viaLayer = yield* expectConfigError(GcsObjectStore.layer(options), option, expected)
    assert.strictEqual(viaConfig, viaLayer)
  })

describe("GcsObjectStore refuses options it cannot use, naming them", () => {
  it.effect("bucket: empty", () =>
    refusedBoth(
      ["bucket"],
      /must not be empty/,
      { wrap: { bucket: Config.String("GCS_BUCKET") }, values: { GCS_BUCKET: "  " } },
      { bucket: "  " }
    )
  )

  it.effect("maxUploadBytes: not a whole number of bytes above 0", () =>
    Effect.gen(function* () {
      for (const bad of [0, -1, 1.5]) {
        yield* refusedBoth(
          ["maxUploadBytes"],
          /whole number of bytes above 0/,
          {
            wrap: { bucket: Config.String("GCS_BUCKET"), maxUploadBytes: Config.Number("GCS_MAX_UPLOAD_BYTES") },
            values: { GCS_BUCKET: bucket, GCS_MAX_UPLOAD_BYTES: String(bad) }
          },
          { bucket, maxUploadBytes: bad }
        )
      }
    })
  )

  it.effect("keyFilename: a file that cannot be read, is not JSON, or is not a service account's key", () =>
    Effect.gen(function* () {
      for (const [keyFilename, says] of [
        [join(dir, "missing.json"), /cannot be read \(ENOENT\)/],
        [file("not-json.json", "client_email=x"), /must name a service-account key file/],
        [file("user.json", { type: "authorized_user", refresh_token: "x" }), /must name a service-account key file/],
        [
          file("bad-key.json", { type: "service_account", client_email: account.clientEmail, private_key: "nope" }),
          /private_key must be the RSA private key/
        ]
      ] as const) {
        yield* refusedBoth(
          ["keyFilename"],
          says,
          {
            wrap: { bucket: Config.String("GCS_BUCKET"), keyFilename: Config.String("GCS_KEY_FILENAME") },
            values: { GCS_BUCKET: bucket, GCS_KEY_FILENAME: keyFilename }
          },
          { bucket, keyFilename }
        )
      }
    })
  )

  it.effect("neither keyFilename nor credentials, and none in the default chain: keyFilename is named", () =>
    Effect.gen(function* () {
      yield* refusedBoth(
        ["keyFilename"],
        /no Google Cloud credentials were found: .*GOOGLE_APPLICATION_CREDENTIALS.*Could not load the default credentials/,
        { wrap: { bucket: Config.String("GCS_BUCKET") }, values: { GCS_BUCKET: bucket } },
        { bucket }
      )
      // The chain's own file is enough: the store is made.
      process.env.GOOGLE_APPLICATION_CREDENTIALS = file("chain.json", {
        type: "service_account",
        client_email: account.clientEmail,
        private_key: pem
      })
      yield* Effect.scoped(Layer.build(GcsObjectStore.layer({ bucket })))
    }).pipe(withoutDefaultCredentials)
  )

  it.effect("credentials.private_key: not an RSA private key in PEM, never shown", () =>
    Effect.gen(function* () {
      const ecKey = generateKeyPairSync("ec", { namedCurve: "P-256" })
        .privateKey.export({ type: "pkcs8", format: "pem" })
        .toString()
      // A PEM key pasted into an environment variable with its line breaks written as \n.
      const escaped = pem.replaceAll("\n", "\\n")
      for (const secret of ["not a private key", escaped, ecKey]) {
        yield* refusedBoth(
          ["credentials", "private_key"],
          /must be the RSA private key of a service-account key file/,
          {
            wrap: {
              bucket: Config.String("GCS_BUCKET"),
              credentials: {
                client_email: Config.String("GCS_CLIENT_EMAIL"),
                private_key: Config.Redacted("GCS_PRIVATE_KEY")
              }
            },
            values: { GCS_BUCKET: bucket, GCS_CLIENT_EMAIL: account.clientEmail, GCS_PRIVATE_KEY: secret }
          },
          { bucket, credentials: { client_email: account.clientEmail, private_key: secret } },
          secret
        )
      }
    })
  )

  it.effect("credentials.client_email: empty", () =>
    refusedBoth(
      ["credentials", "client_email"],
      /must be the service account's email/,
      {
        wrap: {
          bucket: Config.String("GCS_BUCKET"),
          credentials: {
            client_email: Config.String("GCS_CLIENT_EMAIL"),
            private_key: Config.Redacted("GCS_PRIVATE_KEY")
          }
        },
        values: { GCS_BUCKET: bucket, GCS_CLIENT_EMAIL: " ", GCS_PRIVATE_KEY: pem }
      },
      { bucket, credentials: { client_email: " ", private_key: account.credentials.private_key } },
      pem
    )
  )

  it.effect("apiEndpoint: not an http(s) URL", () =>
    Effect.gen(function* () {
      for (const apiEndpoint of ["ftp://127.0.0.1:9199", "http://", "not a host:9199"]) {
        yield* refusedBoth(
          ["apiEndpoint"],
          /must be an http\(s\) URL/,
          {
            wrap: { bucket: Config.String("GCS_BUCKET"), apiEndpoint: Config.String("GCS_API_ENDPOINT") },
            values: { GCS_BUCKET: bucket, GCS_API_ENDPOINT: apiEndpoint }
          },
          { bucket, apiEndpoint }
        )
      }
    })
  )

  it.effect("an endpoint without a scheme is taken as https, as the SDK does", () =>
    Effect.gen(function* () {
      const store = yield* GcsObjectStore.make({
        bucket,
        credentials: account.credentials,
        apiEndpoint: "127.0.0.1:9199"
      })
      const url = yield* store.presignGet({ key: "attachments/org_acme/a.pdf", expiresIn: 60 })
      assert.isTrue(url.startsWith(`https://127.0.0.1:9199/${bucket}/`), url)
    })
  )
})
