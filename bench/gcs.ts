// GCS presign (issue 18): the store's presignPut, which signs with the key it parsed once, against one
// RSA-2048 signature with a reused KeyObject (the floor: the signature every V4 URL needs) and
// against the SDK's getSignedUrl for the same URL (which parses the PEM key on every call).
import { createPrivateKey, generateKeyPairSync, sign } from "node:crypto"
import { Storage } from "@google-cloud/storage"
import { GcsObjectStore } from "@mailroom/gcs"
import { Effect } from "effect"
import { GoogleAuth, JWT } from "google-auth-library"
import { compare, ratioRows } from "./compare.ts"

export const run = async (): Promise<ReadonlyArray<object>> => {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
  const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString()
  const client_email = "mailroom-bench@demo-mailroom.iam.gserviceaccount.com"
  const bucket = "mailroom-attachments"
  const key = "attachments/org_acme/1767225600000-Relevé de compte.pdf"
  const store = await Effect.runPromise(
    GcsObjectStore.make({
      bucket,
      projectId: "demo-mailroom",
      credentials: { client_email, private_key: pem }
    })
  )
  // The SDK with the same service account, authenticated as the adapter did before it signed itself.
  const scopes = ["https://www.googleapis.com/auth/devstorage.full_control"]
  const auth = new GoogleAuth({ authClient: new JWT({ email: client_email, key: pem, scopes }), scopes })
  auth.jsonContent = { client_email, private_key: pem }
  const file = new Storage({ projectId: "demo-mailroom", authClient: auth }).bucket(bucket).file(key)
  const keyObject = createPrivateKey(pem)
  // A string to sign of the size a V4 URL's is.
  const blob = Buffer.from(
    `GOOG4-RSA-SHA256\n20260101T000000Z\n20260101/auto/storage/goog4_request\n${"ab".repeat(32)}`
  )

  const contenders = [
    { name: "one RSA-2048 signature, reused KeyObject", run: () => sign("sha256", blob, keyObject) },
    {
      name: "GcsObjectStore presignPut",
      run: () => Effect.runPromise(store.presignPut({ key, contentType: "application/pdf", expiresIn: 3600 }))
    },
    {
      name: "SDK file.getSignedUrl (v4, write)",
      run: () =>
        file.getSignedUrl({
          version: "v4",
          action: "write",
          contentType: "application/pdf",
          expires: Date.now() + 3600_000
        })
    }
  ]
  return ratioRows(await compare(contenders, { rounds: 7, perRound: 300 }), contenders, [undefined, 1.1])
}
