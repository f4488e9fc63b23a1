// The Storage client and the service account a GcsObjectStore is made with, each option checked when
// the store is made: a key that cannot sign, a key file that is no service account's or an endpoint
// that is no URL fails `make` with a ConfigError naming the option, before any request is made.
import { createPrivateKey, type KeyObject } from "node:crypto"
import { readFileSync } from "node:fs"
import { Storage } from "@google-cloud/storage"
import * as Adapter from "@mailroom/core/adapter"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import { GoogleAuth, JWT } from "google-auth-library"

/** A service account whose private key is at hand: it signs URLs in process and the SDK's requests. */
export interface Account {
  readonly clientEmail: string
  /** The PEM text, for the SDK's JWT client. */
  readonly pem: string
  /** Parsed once, for the store's lifetime: the SDK's signer parses the PEM text on every URL. */
  readonly privateKey: KeyObject
}

const scopes = ["https://www.googleapis.com/auth/devstorage.full_control"]

// Service-account keys are RSA (GOOG4-RSA-SHA256); what Node cannot parse, the SDK cannot sign with.
const rsaKey = (pem: string): KeyObject | undefined => {
  try {
    const key = createPrivateKey(pem)
    return key.asymmetricKeyType === "rsa" ? key : undefined
  } catch {
    return undefined
  }
}

const rsaKeyHint =
  "must be the RSA private key of a service-account key file, in PEM (a key read from an environment variable may need its \\n turned into line breaks)"

/** The inline `credentials` option. */
export const inlineAccount = (
  clientEmail: string,
  secret: Adapter.Secret
): Effect.Effect<Account, Config.ConfigError> => {
  if (clientEmail.trim() === "") {
    return Effect.fail(Adapter.invalidOption(["credentials", "client_email"], "must be the service account's email"))
  }
  const pem = Adapter.secretValue(secret)
  const privateKey = rsaKey(pem)
  return privateKey === undefined
    ? Effect.fail(Adapter.invalidOption(["credentials", "private_key"], rsaKeyHint))
    : Effect.succeed({ clientEmail, pem, privateKey })
}

const notServiceAccount =
  "must name a service-account key file (JSON with client_email and private_key); for other credentials leave keyFilename unset and use the default chain (GOOGLE_APPLICATION_CREDENTIALS), or inject a client"

/** The service account of the file `keyFilename` names, read once. */
export const keyFileAccount = (path: string): Effect.Effect<Account, Config.ConfigError> =>
  Effect.gen(function* () {
    const text = yield* Effect.try({
      try: () => readFileSync(path, "utf8"),
      catch: (error) => {
        const code = (error as { code?: unknown }).code
        return Adapter.invalidOption("keyFilename", `cannot be read${typeof code === "string" ? ` (${code})` : ""}`)
      }
    })
    const parsed = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => Adapter.invalidOption("keyFilename", notServiceAccount)
    })
    const { client_email, private_key } = (typeof parsed === "object" && parsed !== null ? parsed : {}) as Record<
      string,
      unknown
    >
    if (typeof client_email !== "string" || client_email === "" || typeof private_key !== "string") {
      return yield* Effect.fail(Adapter.invalidOption("keyFilename", notServiceAccount))
    }
    const privateKey = rsaKey(private_key)
    if (privateKey === undefined) {
      return yield* Effect.fail(Adapter.invalidOption("keyFilename", `names a file whose private_key ${rsaKeyHint}`))
    }
    return { clientEmail: client_email, pem: private_key, privateKey }
  })

/**
 * The SDK's `credentials` and `keyFilename` options print a deprecation notice on every construction;
 * an `authClient` does not. The SDK finds the email it signs for in `jsonContent`, which the
 * deprecated option would have set: set here, it is the same.
 */
const serviceAccountAuth = (account: Account): GoogleAuth => {
  const auth = new GoogleAuth({
    authClient: new JWT({ email: account.clientEmail, key: account.pem, scopes }),
    scopes
  })
  auth.jsonContent = { client_email: account.clientEmail, private_key: account.pem }
  return auth
}

/** The client for the options; its `apiEndpoint` is what the SDK made of the option, and what URLs are signed for. */
export const makeClient = (
  options: { readonly projectId?: string | undefined; readonly apiEndpoint?: string | undefined },
  account: Account | undefined
): Effect.Effect<Storage, Config.ConfigError> => {
  const client = new Storage({
    ...(options.projectId === undefined ? {} : { projectId: options.projectId }),
    ...(options.apiEndpoint === undefined ? {} : { apiEndpoint: options.apiEndpoint }),
    ...(account === undefined ? {} : { authClient: serviceAccountAuth(account) })
  })
  // The SDK puts https:// before an endpoint without a scheme ("127.0.0.1:9199"), as documented.
  const endpointUsable =
    options.apiEndpoint === undefined ||
    (options.apiEndpoint.trim() !== "" &&
      URL.canParse(client.apiEndpoint) &&
      /^https?:$/.test(new URL(client.apiEndpoint).protocol))
  return endpointUsable
    ? Effect.succeed(client)
    : Effect.fail(Adapter.invalidOption("apiEndpoint", "must be an http(s) URL, such as http://127.0.0.1:9199"))
}

/**
 * With neither a key file nor inline credentials, the SDK's default chain: resolved once here, so a
 * machine without credentials fails at start-up naming the option. The SDK would otherwise go on
 * without any and send anonymous requests. A custom endpoint (an emulator) is sent none, so needs none.
 */
export const defaultCredentials = (client: Storage): Effect.Effect<void, Config.ConfigError> =>
  client.customEndpoint
    ? Effect.void
    : Adapter.credentialsFromChain(
        () => client.authClient.getClient(),
        "keyFilename",
        "no Google Cloud credentials were found: set keyFilename (or credentials) to a service-account key, or GOOGLE_APPLICATION_CREDENTIALS, or run where Google's metadata server provides them"
      )
