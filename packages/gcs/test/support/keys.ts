// A throwaway service account for tests: an RSA key pair generated here, whose private half is
// given to the store as inline credentials and whose public half verifies what the store signed.
import { generateKeyPairSync } from "node:crypto"
import { Redacted } from "effect"
import type { GcsObjectStore } from "../../src/index.js"
import type { Signer } from "./verifyV4.js"

export interface ServiceAccount extends Signer {
  readonly credentials: GcsObjectStore.ServiceAccountCredentials & { readonly private_key: Redacted.Redacted<string> }
}

export const makeServiceAccount = (
  clientEmail = "mailroom-test@demo-mailroom.iam.gserviceaccount.com"
): ServiceAccount => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
  const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString()
  return { clientEmail, publicKey, credentials: { client_email: clientEmail, private_key: Redacted.make(pem) } }
}
